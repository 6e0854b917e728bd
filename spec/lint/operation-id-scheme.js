// Redocly rule: an operationId is `<resource>_<verb>`, where the resource is the path's first segment and
// the verb is fixed by the method and by whether the path addresses one record (`/{id}`) or the collection.
// PUT is `update` and PATCH is `patch`, so the two update operations stay distinct; HEAD is its GET's verb
// with `_head`. An action on a record (`/{resource}/{id}/<action>`, e.g. POST /webhook-endpoints/{id}/test) is
// `<resource>_<action>` with `-` as `_`, whatever its method; so is a named record (`GET /api-keys/current` is
// `api-keys_current`). A webhook (the spec's `webhooks`, one per event
// type such as `space.updated`) is `webhooks_<type>` with `.` as `_`.

const VERBS = {
  collection: { get: 'list', head: 'list_head', post: 'store' },
  record: { get: 'show', head: 'show_head', put: 'update', patch: 'patch', delete: 'delete' },
};

export default function OperationIdScheme() {
  let path = '';
  let webhook = false;
  return {
    PathItem: {
      enter(_pathItem, ctx) {
        path = String(ctx.key);
        webhook = ctx.location.pointer.startsWith('#/webhooks/');
      },
    },
    Operation: {
      enter(operation, ctx) {
        const method = String(ctx.key);
        const [resource, ...rest] = path.split('/').filter(Boolean);
        const kind = rest.length === 0 ? 'collection' : 'record';
        // A named record (`/api-keys/current`, a literal segment in the place of the id) is an action too.
        const named = rest.length === 1 && !rest[0].startsWith('{') ? rest[0] : undefined;
        const action = (rest.length >= 2 ? rest[1] : named)?.replace(/-/g, '_');
        // A record under a record's collection (`/{resource}/{id}/<collection>/{sub_id}`): `<resource>_<collection>_<verb>`.
        const verb =
          rest.length === 3
            ? `${action}_${VERBS.record[method]}`
            : action
              ? `${action}${method === 'head' ? '_head' : ''}`
              : VERBS[kind][method];
        const expected = webhook ? `webhooks_${path.replace(/\./g, '_')}` : verb ? `${resource}_${verb}` : undefined;
        if (!expected) {
          ctx.report({
            message: `${method.toUpperCase()} ${path} has no verb in the naming scheme (${JSON.stringify(VERBS)}).`,
            location: ctx.location.key(),
          });
        } else if (operation.operationId !== expected) {
          ctx.report({
            message: `operationId of ${method.toUpperCase()} ${path} must be "${expected}" (scheme <resource>_<verb>).`,
            location: ctx.location.child('operationId'),
          });
        }
      },
    },
  };
}
