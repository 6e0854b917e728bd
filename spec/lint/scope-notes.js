// Redocly decorator (applied as `npm run generate` bundles the spec): each operation's description ends with the
// scope its security requirement declares, as Scalar's page lists an http bearer scheme without its scopes, and
// openapi-typescript copies descriptions into the types' doc comments: the docs page and the client's types
// both say it, from the one declaration.

const scopesOf = (requirements) => [
  ...new Set((Array.isArray(requirements) ? requirements : []).flatMap((r) => Object.values(r).flat())),
];

export default function ScopeNotes() {
  let rootSecurity;
  return {
    Root: {
      enter(root) {
        rootSecurity = root.security;
      },
    },
    Operation: {
      leave(operation) {
        const scopes = scopesOf(operation.security ?? rootSecurity);
        if (scopes.length === 0) return;
        const note = `**Scope:** ${scopes.map((scope) => `\`${scope}\``).join(' and ')} (a key without it gets \`403\`).`;
        const text = (operation.description ?? '').trimEnd();
        operation.description = `${text}${text ? '\n\n' : ''}${note}\n`;
      },
    },
  };
}
