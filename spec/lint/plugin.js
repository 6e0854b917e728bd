// Redocly plugin holding this project's own spec rules.
import OperationIdScheme from './operation-id-scheme.js';

export default function dssPlugin() {
  return {
    id: 'dss',
    rules: {
      oas3: {
        'operation-id-scheme': OperationIdScheme,
      },
    },
  };
}
