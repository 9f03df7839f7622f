export { RecordedSpan, recordingTracer } from "./recording-tracer.js"
