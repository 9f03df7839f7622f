import { type Context, type Exit, Option, Tracer } from "effect"

/** A span as `recordingTracer` keeps it: its name, parent, attributes, events, links and status. */
export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly traceId: string
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<{ readonly name: string; readonly time: bigint }> = []
  readonly links: Array<Tracer.SpanLink>
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind,
    readonly spanId: string,
  ) {
    this.traceId = Option.match(parent, {
      onNone: () => `trace-${spanId}`,
      onSome: (span) => span.traceId,
    })
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event(name: string, time: bigint) {
    this.events.push({ name, time })
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

/**
 * An Effect `Tracer` that keeps every span it starts, in order, for tests that check what is
 * traced: provide `tracer` (`Effect.withTracer`), then read `spans`, or `named(name)`.
 */
export const recordingTracer = () => {
  const spans: Array<RecordedSpan> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const span = new RecordedSpan(
        name,
        parent,
        context,
        links,
        startTime,
        kind,
        `span-${spans.length + 1}`,
      )
      spans.push(span)
      return span
    },
    context: (f) => f(),
  })
  const named = (name: string) => spans.filter((span) => span.name === name)
  return { spans, tracer, named }
}
