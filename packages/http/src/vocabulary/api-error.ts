import { errorCatalogue, type ErrorCode } from "./error-catalogue.js"

/** An error response: the spec's Error body, `status` always equal to the HTTP status. */
export interface ApiError {
  readonly status: number
  readonly code: ErrorCode
  readonly message: string
}

/** The error `code` means, with its status from the catalogue. */
export const apiError = (code: ErrorCode, message: string): ApiError => ({
  status: errorCatalogue[code].status,
  code,
  message,
})

/** The media type of every body the API answers with, the Error body included. */
export const jsonContentType = "application/json; charset=utf-8"

/** The Error body as JSON text: the one writer of it, whoever sends it. */
export const errorBodyText = (error: ApiError): string =>
  JSON.stringify({ code: error.code, message: error.message, status: error.status })

/** The part of a Koa context an error response writes; headers already set are kept. */
interface Respondable {
  status: number
  body: unknown
  set(field: string, value: string): void
}

export const respondWithError = (ctx: Respondable, error: ApiError): void => {
  ctx.status = error.status
  ctx.set("Content-Type", jsonContentType)
  ctx.body = errorBodyText(error)
}
