import { Either, Encoding, ParseResult, Schema } from "effect"
import { PetId } from "./Pet.js"

const prefix = "after:"
const decimal = /^[1-9][0-9]{0,15}$/
const isPetId = Schema.is(PetId)

/**
 * The opaque token that continues a listing: it names the last pet a page held. Decoding
 * accepts only tokens this schema encoded, so a tampered or truncated cursor is refused.
 */
export const PageCursor = Schema.transformOrFail(Schema.String, PetId, {
  strict: true,
  decode: (token, _, ast) => {
    const text = Encoding.decodeBase64UrlString(token)
    const digits =
      Either.isRight(text) && text.right.startsWith(prefix) ? text.right.slice(prefix.length) : ""
    const id = decimal.test(digits) ? Number(digits) : Number.NaN
    return isPetId(id)
      ? ParseResult.succeed(id)
      : ParseResult.fail(new ParseResult.Type(ast, token, "is not a cursor this service issued"))
  },
  encode: (id) => ParseResult.succeed(Encoding.encodeBase64Url(`${prefix}${id}`)),
}).annotations({
  identifier: "PageCursor",
  description: 'Opaque token from a previous page\'s `Link: rel="next"` header.',
})
