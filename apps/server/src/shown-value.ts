/**
 * How a refusal quotes a setting's value that may hold a secret (a URL's user and password, or a
 * `?password=` in its query): a plain word is shown whole, as `memroy` helps whoever mistyped it;
 * of anything else only its scheme, if it has one, since a mistyped URL (`redis//u:pw@host`,
 * `redis://host:pw`) puts its secret where no parser can find it.
 */
export const shownValue = (text: string): string => {
  if (/^[\w.-]*$/.test(text)) return `got ${JSON.stringify(text)}`
  const scheme = /^[a-z][a-z\d+.-]*:/i.exec(text)?.[0]
  return scheme === undefined
    ? "got a value not shown here, as it may hold a password"
    : `got a ${JSON.stringify(scheme)} value, not shown here as it may hold a password`
}
