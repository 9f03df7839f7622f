import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { captureLogs } from "../harness/log-capture.js"

describe("the logger", () => {
  it("writes JSON lines with level, time, pid and message", () => {
    const { logger, raw } = captureLogs()
    logger.info({ answer: 42 }, "hello")
    const line = parseLogLine(raw[0] ?? "")
    assert.equal(line["level"], "info")
    assert.equal(line["message"], "hello")
    assert.equal(line["answer"], 42)
    assert.equal(line["pid"], process.pid)
    assert.ok(!Number.isNaN(Date.parse(String(line["time"]))))
  })

  it("redacts an Authorization header or a key passed to it by mistake", () => {
    const { logger, raw } = captureLogs()
    logger.info({ headers: { authorization: "Bearer sekrit-1" } }, "headers")
    logger.info({ req: { headers: { authorization: "Bearer sekrit-2" } } }, "request")
    logger.info({ authorization: "Bearer sekrit-3", apiKey: "sekrit-4", key: "sekrit-5" }, "keys")
    logger.child({ token: "sekrit-6" }).info("child")
    assert.equal(raw.length, 4)
    for (const line of raw) assert.doesNotMatch(line, /sekrit/)
    assert.match(raw[0] ?? "", /"authorization":"\[redacted\]"/)
  })

  it("writes nothing below its level", () => {
    const { logger, raw } = captureLogs("warn")
    logger.info("not written")
    logger.warn("written")
    assert.deepEqual(
      raw.map((line) => parseLogLine(line)["message"]),
      ["written"],
    )
  })
})
