// One measurement whose requests each need a record of their own (a delete): autocannon through its documented
// API, in its own process like load.ts's CLI runs, with `setupRequest` giving each request the next id of a range
// the benchmark seeded. Prints autocannon's JSON result, as its CLI's --json does. Argument: the load as JSON.
import autocannon from 'autocannon';

const { origin, pathTemplate, method, headers, connections, duration, firstId } = JSON.parse(process.argv[2]);
let next = firstId;
const result = await autocannon({
  url: origin,
  connections,
  duration,
  requests: [
    {
      method,
      headers,
      setupRequest: (request) => ({ ...request, method, path: pathTemplate.replace('{id}', String(next++)) }),
    },
  ],
});
process.stdout.write(`${JSON.stringify(result)}\n`);
