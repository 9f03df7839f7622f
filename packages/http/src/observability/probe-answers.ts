import { apiError, type ApiError } from "../vocabulary/api-error.js"

/**
 * What `GET /healthz` and `GET /readyz` answer, wherever they are served: the app's routes and
 * the probe port's thread (`serveProbes`).
 */
export const aliveBody = { status: "ok" } as const
export const readyBody = { status: "ready" } as const

/** Why a process is not ready, each answered 503 with `Retry-After`. */
export const notReadyErrors = {
  storage_unavailable: apiError("storage_unavailable", "storage is not answering; not ready"),
  shutting_down: apiError("shutting_down", "shutting down; not ready"),
} as const satisfies Record<string, ApiError>

export type NotReadyReason = keyof typeof notReadyErrors
