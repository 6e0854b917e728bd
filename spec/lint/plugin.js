// Redocly plugin holding this project's own spec rules, and the decorator that bundling applies.
import OperationIdScheme from './operation-id-scheme.js';
import ScopeNotes from './scope-notes.js';

export default function dssPlugin() {
  return {
    id: 'dss',
    rules: {
      oas3: {
        'operation-id-scheme': OperationIdScheme,
      },
    },
    decorators: {
      oas3: {
        'scope-notes': ScopeNotes,
      },
    },
  };
}
