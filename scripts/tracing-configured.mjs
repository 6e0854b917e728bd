// Whether the environment asks for traces (scripts/tracing.mjs): an OTLP endpoint or a traces exporter named, and
// the SDK not disabled (OTEL_SDK_DISABLED=true). Other OTEL_ variables alone only tune what is asked for. Its own
// file, so that deciding reads no OpenTelemetry code.
export function tracingConfigured(env) {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporter);
}
