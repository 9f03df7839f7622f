const quote = 0x22
const comma = 0x2c
const plus = 0x2b
const minus = 0x2d
const dot = 0x2e
const zero = 0x30
const nine = 0x39
const upperE = 0x45
const openBracket = 0x5b
const backslash = 0x5c
const closeBracket = 0x5d
const lowerE = 0x65
const openBrace = 0x7b
const closeBrace = 0x7d

/**
 * Whether JSON text may write a number with a fraction or an exponent: only then does a digit
 * stand right before `.`, `e` or `E`. Strings can match too (`"R2.D2"`); that costs a closer
 * look, never a wrong answer.
 */
export const mayWriteFractions = (text: string): boolean => /[0-9][.eE]/.test(text)

const isDigit = (char: number): boolean => char >= zero && char <= nine

const isNumberChar = (char: number): boolean =>
  isDigit(char) ||
  char === minus ||
  char === plus ||
  char === dot ||
  char === lowerE ||
  char === upperE

/** The index of the `"` that closes the string opening at `start`. */
const stringEnd = (text: string, start: number): number => {
  let index = start + 1
  while (index < text.length) {
    const char = text.charCodeAt(index)
    if (char === backslash) index += 2
    else if (char === quote) return index
    else index++
  }
  return index
}

/** The name a member's key stands for, escapes (`"category\u0049d"`) resolved. */
const keyAt = (text: string, start: number, end: number): string => {
  const raw = text.slice(start + 1, end)
  if (!raw.includes("\\")) return raw
  const key: unknown = JSON.parse(text.slice(start, end + 1))
  return typeof key === "string" ? key : raw
}

/**
 * The members of a JSON object among `fields` whose value is written as a number with a fraction
 * or an exponent (`1.0`, `1e0`, `9007199254740990.6`), with that number as written: JSON.parse
 * turns such a literal into a number that may well be an integer (`1`, `9007199254740991`), so
 * only the text tells that the client did not send one. Only the object's own members count, and
 * of a repeated name the last, as JSON.parse keeps the last.
 *
 * `text` must be JSON that JSON.parse accepted; for anything but an object, nothing is found.
 */
export const fractionalMembers = (
  text: string,
  fields: ReadonlySet<string>,
): ReadonlyMap<string, string> => {
  const found = new Map<string, string>()
  let depth = 0
  let inObject = false
  let expectingKey = false
  let key: string | undefined
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (char === quote) {
      const end = stringEnd(text, index)
      if (depth === 1 && expectingKey) {
        key = keyAt(text, index, end)
        found.delete(key)
        expectingKey = false
      }
      index = end
    } else if (char === openBrace || char === openBracket) {
      if (++depth === 1) {
        inObject = char === openBrace
        expectingKey = inObject
      }
    } else if (char === closeBrace || char === closeBracket) {
      depth--
    } else if (depth !== 1 || !inObject) {
      continue
    } else if (char === comma) {
      expectingKey = true
      key = undefined
    } else if (key !== undefined && (char === minus || isDigit(char))) {
      let end = index + 1
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++
      const literal = text.slice(index, end)
      if (fields.has(key) && /[.eE]/.test(literal)) found.set(key, literal)
      index = end - 1
    }
  }
  return found
}
