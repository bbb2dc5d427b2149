import { Option, type Command } from 'commander';
import { Access, DASHBOARD_TOKEN_ENV, tokenFromEnv } from '../../dashboard/access.js';
import { DASHBOARD_DEFAULTS } from '../../config/defaults.js';
import { JobQueue } from '../../job-queue.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { LineWriter } from '../output.js';
import { onInterrupts } from '../signals.js';

interface DashboardOptions extends ConnectionOptions {
  port: number;
  host: string;
  token?: string;
}

export function registerDashboard(program: Command): void {
  addConnectionOptions(program.command('dashboard'))
    .description('serve a web page of the queue (counts, throughput, claims, failed jobs) and Prometheus metrics')
    .addOption(new Option('--port <port>', 'port to listen on (0: any free one)').argParser(numberIn(0, 65_535)).default(DASHBOARD_DEFAULTS.port))
    .addOption(new Option('--host <address>', 'address to listen on; any other than this machine needs a token').default(DASHBOARD_DEFAULTS.host))
    .addOption(new Option('--token <token>', `required to open the page, the API and /metrics (at least 16 characters; better: $${DASHBOARD_TOKEN_ENV}, which ps does not show)`))
    .addHelpText(
      'after',
      `
Examples:
  jobq dashboard                                    # http://127.0.0.1:9750, this machine only
  JOBQ_DASHBOARD_TOKEN=$(openssl rand -hex 24) jobq dashboard --host 0.0.0.0
  curl -H "Authorization: Bearer $JOBQ_DASHBOARD_TOKEN" http://host:9750/metrics

With a token, the page asks for it once and keeps a cookie (HttpOnly, SameSite=Strict); the API
and /metrics take it as a bearer token. Every action (requeue, cancel, pause) is a POST that
also needs the page's anti-CSRF value.`,
    )
    .action(async (options: DashboardOptions) => {
      // The dashboard's modules are loaded by this command only: with prom-client they took 40-50 ms
      // of every jobq command's start.
      const [{ createDashboardServer }, { listen }, { StatsSampler }] = await Promise.all([
        import('../../dashboard/server.js'),
        import('../../dashboard/http.js'),
        import('../../dashboard/sampler.js'),
      ]);
      const access = new Access(options.token ?? tokenFromEnv(), options.host);
      const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table, reconnect: true });
      const err = new LineWriter(process.stderr);
      const sampler = new StatsSampler(queue, (error) => err.line(`jobq dashboard: ${(error as Error).message}`));
      try {
        await queue.assertReady();
        await sampler.start();
        const { host, port, database } = queue.location;
        const where = `queue ${queue.table} in database ${database} at ${host}:${port}`;
        const server = createDashboardServer({ queue, access, sampler, where });
        const address = await listen(server, options.host, options.port);
        new LineWriter().line(`jobq dashboard on ${address} (${where}); Ctrl-C to stop`);
        let removeSignalHandlers = () => {};
        await new Promise<void>((resolve) => (removeSignalHandlers = onInterrupts(() => resolve(), () => undefined)));
        removeSignalHandlers();
        server.close();
        server.closeAllConnections();
      } finally {
        sampler.stop();
        await queue.close();
      }
    });
}
