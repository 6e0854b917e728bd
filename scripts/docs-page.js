// Starts the /docs page (inlined by scripts/docs.ts): Scalar's API reference on the embedded spec. The page is
// the same bytes for every host, so this deployment's origin comes from the browser: the spec's samples are
// written for http://127.0.0.1:3000, and its server is the relative base path; both become location.origin.
(() => {
  const SAMPLE_ORIGIN = 'http://127.0.0.1:3000';
  const read = (id) => JSON.parse(document.getElementById(id).textContent);
  const config = read('dss-docs-config');
  const spec = JSON.parse(document.getElementById('dss-spec').textContent, (_key, value) =>
    typeof value === 'string' ? value.replaceAll(SAMPLE_ORIGIN, location.origin) : value,
  );
  // HEAD operations stay in the contract (spec-driven proxies read them) but not in the reference, where each
  // doubled its GET in the sidebar: Scalar leaves out what `x-scalar-ignore` marks. The guide says HEAD works
  // wherever GET does.
  for (const item of Object.values(spec.paths ?? {})) {
    if (item?.head) item.head['x-scalar-ignore'] = true;
  }
  const basePath = spec.servers?.[0]?.url ?? '';
  spec.servers = [{ url: `${location.origin}${basePath}`, description: 'This deployment (the origin of this page)' }];

  // Creates that document Idempotency-Key get a fresh one unless the reader typed their own: the spec gives
  // the header no example, so a console would otherwise send none, and never one shared by every reader.
  const resolve = (node) =>
    typeof node?.$ref === 'string' && node.$ref.startsWith('#/')
      ? node.$ref
          .slice(2)
          .split('/')
          .reduce((at, part) => at?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], spec)
      : node;
  const keyed = [];
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const parameters = [...(item.parameters ?? []), ...(operation?.parameters ?? [])].map(resolve);
      if (parameters.some((p) => p?.in === 'header' && p.name?.toLowerCase() === 'idempotency-key')) {
        const pattern = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
        keyed.push({ method: method.toUpperCase(), path: new RegExp(`^${basePath}${pattern}$`) });
      }
    }
  }
  // Scalar's hook before a request is built: `request` shows what would be sent, `requestBuilder` is what
  // the request is then built from.
  const onBeforeRequest = ({ request, requestBuilder }) => {
    const { pathname } = new URL(request.url);
    const documented = keyed.some((each) => each.method === request.method && each.path.test(pathname));
    if (documented && !requestBuilder.headers.has('Idempotency-Key')) {
      requestBuilder.headers.set('Idempotency-Key', crypto.randomUUID());
    }
  };

  // A problem type's link (/problems/<kind> redirects to /docs#problem-<kind>) opens its row of the guide.
  const showProblemType = () => {
    if (!location.hash.startsWith('#problem-')) return;
    const id = decodeURIComponent(location.hash.slice(1));
    let tries = 0;
    const find = () => {
      const anchor = document.getElementById(id) ?? document.querySelector(`[id$="${CSS.escape(id)}"]`);
      if (anchor) anchor.scrollIntoView({ block: 'center' });
      else if (tries++ < 50) setTimeout(find, 100);
    };
    find();
  };

  globalThis.Scalar.createApiReference('#app', {
    content: spec,
    // Nothing from another origin: no web fonts, no telemetry, no hosted agent or proxy; requests go to this
    // origin only (the page's Content-Security-Policy enforces it).
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    // The key typed into the console stays in this tab: not written to the browser's storage.
    persistAuth: false,
    defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
    documentDownloadType: 'both',
    ...(config.sandboxKey
      ? {
          authentication: {
            preferredSecurityScheme: 'bearerAuth',
            securitySchemes: { bearerAuth: { token: config.sandboxKey } },
          },
        }
      : {}),
    onBeforeRequest,
    onLoaded: showProblemType,
  });
  addEventListener('hashchange', showProblemType);
})();
