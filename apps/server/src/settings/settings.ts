import { apiKeySettings } from "./api-keys.js"
import { limitSettings } from "./limits.js"
import { networkSettings } from "./network.js"
import { observabilitySettings } from "./observability.js"
import { overloadSettings } from "./overload.js"
import { shutdownSettings } from "./shutdown.js"
import { storageSettings } from "./storage.js"
import { tracingSettings } from "./tracing.js"

/** Every setting of the server, in the order the README's configuration table lists them. */
export const settings = {
  ...networkSettings,
  ...apiKeySettings,
  ...storageSettings,
  ...limitSettings,
  ...overloadSettings,
  ...shutdownSettings,
  ...observabilitySettings,
  ...tracingSettings,
}
