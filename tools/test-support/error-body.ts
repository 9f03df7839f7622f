import assert from "node:assert/strict"
import type { Answer } from "./requests.js"

/** Asserts the response is the spec's Error body with this status and code, and returns it. */
export const assertError = async (response: Response, status: number, code: string) => {
  assert.equal(response.status, status)
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
  const body: unknown = await response.json()
  assert.ok(typeof body === "object" && body !== null)
  assert.deepEqual(Object.keys(body).sort(), ["code", "message", "status"])
  assert.deepEqual({ ...body, message: "" }, { code, message: "", status })
  const message = "message" in body ? body.message : undefined
  assert.ok(typeof message === "string" && message.length > 0)
  return message
}

/** Asserts the answer is the Error body with this status and code; returns its message. */
export const assertErrorAnswer = (answer: Answer, status: number, code: string): string => {
  assert.equal(answer.status, status, answer.body)
  assert.match(answer.headers["content-type"] ?? "", /^application\/json/)
  const body: unknown = JSON.parse(answer.body)
  assert.ok(typeof body === "object" && body !== null)
  assert.deepEqual(Object.keys(body).sort(), ["code", "message", "status"])
  assert.deepEqual({ ...body, message: "" }, { code, message: "", status })
  const message = "message" in body ? body.message : undefined
  assert.ok(typeof message === "string" && message.length > 0)
  return message
}
