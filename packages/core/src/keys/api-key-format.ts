import { hash, randomBytes } from "node:crypto"
import { Base62 } from "@sindresorhus/base62"
import CRC32 from "crc-32"

/**
 * A stored API key: `pst_`, 256 random bits in base62 (43 characters), then a CRC32 of those 43
 * characters in base62 (6 characters) — the shape of GitHub's tokens. The prefix lets secret
 * scanners find a leaked key; the checksum lets a mistyped key be refused without a store lookup.
 * It is a b64token (RFC 6750), so it travels as `Authorization: Bearer <key>` unchanged.
 */
export const apiKeyPrefix = "pst_"
const randomLength = 43
const checksumLength = 6
const apiKeyShape = new RegExp(
  `^${apiKeyPrefix}([0-9A-Za-z]{${randomLength}})([0-9A-Za-z]{${checksumLength}})$`,
)

const base62 = new Base62()

const checksumOf = (random: string): string =>
  base62.encodeInteger(CRC32.str(random) >>> 0).padStart(checksumLength, "0")

/** A new key, 256 bits from the system's CSPRNG. */
export const generateApiKey = (): string => {
  const random = base62
    .encodeBigInt(BigInt(`0x${randomBytes(32).toString("hex")}`))
    .padStart(randomLength, "0")
  return `${apiKeyPrefix}${random}${checksumOf(random)}`
}

/** Whether a token claims to be a stored key: it starts with the prefix. */
export const looksLikeStoredKey = (token: string): boolean => token.startsWith(apiKeyPrefix)

/** Whether `token` has the shape of a stored key and its checksum is right. */
export const isWellFormedApiKey = (token: string): boolean => {
  const [, random, checksum] = apiKeyShape.exec(token) ?? []
  return random !== undefined && checksum === checksumOf(random)
}

/** What the store keeps of a key: its SHA-256, 64 lowercase hex digits. */
export const hashApiKey = (key: string): string => hash("sha256", key, "hex")

/** A stored key's id: public, shown by `list` and logged as the principal; not derived from the key. */
export const generateKeyId = (): string => `key_${randomBytes(8).toString("hex")}`
