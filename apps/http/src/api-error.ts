/** An error response: the spec's Error body, `status` always equal to the HTTP status. */
export interface ApiError {
  readonly status: number
  readonly code: string
  readonly message: string
}

export const apiError = (status: number, code: string, message: string): ApiError => ({
  status,
  code,
  message,
})

/** The part of a Koa context an error response writes; headers already set are kept. */
interface Respondable {
  status: number
  body: unknown
}

export const respondWithError = (ctx: Respondable, error: ApiError): void => {
  ctx.status = error.status
  ctx.body = { code: error.code, message: error.message, status: error.status }
}
