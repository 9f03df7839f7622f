/**
 * The statement the service runs for a batch of one create without a key, as @effect/sql
 * compiles it on SQLite: what the raw commits and the layers under a create run without it.
 */
export const serviceInsert = `INSERT INTO "pets" ("name","category_id","status") VALUES (?,?,?) RETURNING id, name, category_id AS "categoryId", status`
