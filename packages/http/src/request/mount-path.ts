/**
 * Where the app is mounted: the prefix koa-mount took off the path before the app saw it
 * (`ctx.mountPath`), without a trailing slash, or "" when the app is not mounted (koa-mount at
 * `/` sets none). Every URL the app writes starts with it, so that it names the path the client
 * has to ask for.
 */
export const mountPathOf = (ctx: object): string => {
  if (!("mountPath" in ctx)) return ""
  const { mountPath } = ctx
  if (typeof mountPath !== "string") return ""
  // `/` + `/v1` would make `//v1`, which a client reads as the host `v1`.
  return mountPath.endsWith("/") ? mountPath.replace(/\/+$/, "") : mountPath
}

/** `path` (one the app's router knows, such as `/v1/pets`) as the client reaches it. */
export const publicPath = (ctx: object, path: string): string => {
  const mountPath = mountPathOf(ctx)
  return mountPath === "" ? path : mountPath + path
}

/** How many mount paths `perMountPath` remembers before it starts afresh. */
const mountPathsKept = 32

/**
 * `build` once per mount path it is asked for, then remembered: the unmounted value, and those
 * of the few prefixes the app is mounted at. Mount paths come from the host's code, not from
 * clients; the bound only keeps a host that invents them per request from growing memory.
 */
export const perMountPath = <A>(build: (mountPath: string) => A): ((mountPath: string) => A) => {
  let unmounted: { readonly value: A } | undefined
  const mounted = new Map<string, A>()
  return (mountPath) => {
    if (mountPath === "") {
      unmounted ??= { value: build("") }
      return unmounted.value
    }
    const known = mounted.get(mountPath)
    if (known !== undefined) return known
    const value = build(mountPath)
    if (mounted.size >= mountPathsKept) mounted.clear()
    mounted.set(mountPath, value)
    return value
  }
}
