import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { destination, symbols, type DestinationStream } from 'pino';
import { GatewayError, isOutage } from '../errors.js';
import { accessLine, serializers } from './log.js';

/** Largest request body read (bytes); MCP messages are small, tool arguments rarely more than KBs. */
export const BODY_LIMIT = 4 * 1024 * 1024;

const FASTIFY_CODES: Record<string, GatewayError['code']> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'TG_ERR_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'TG_ERR_PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_JSON_BODY: 'TG_ERR_BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'TG_ERR_BAD_REQUEST',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'TG_ERR_BAD_REQUEST',
};

/** What the access line needs of a pino logger beyond Fastify's type: its bindings and its stream. */
interface PinoInternals {
  isLevelEnabled(level: string): boolean;
  [symbols.chindingsSym]: string;
  [symbols.streamSym]: DestinationStream;
}

/**
 * One access line per request, when it completes (with the request, the status and the time),
 * instead of Fastify's two: a log line costs about 13 µs, which on the tools/call path is a tenth of
 * the gateway's CPU (scripts/bench). Failed responses keep Fastify's error line.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      super.requestCompleted(error, request, reply);
      return;
    }
    const log = reply.log as unknown as PinoInternals;
    if (!log.isLevelEnabled('info')) return;
    log[symbols.streamSym].write(
      accessLine(log[symbols.chindingsSym], request, reply.statusCode, reply.elapsedTime),
    );
  }
}

/** Log lines are written once about this many characters wait, */
const LOG_BATCH_CHARS = 4_096;
/** or this often while any wait. */
const LOG_FLUSH_MS = 100;

/**
 * Standard output, for the log. Written synchronously (pino's SonicBoom, `sync`): pino's default,
 * asynchronous, flushes what is queued when the process exits and retries a broken pipe there
 * forever, so a gateway whose log reader had died (`npm start | tee`, a supervisor, all in one
 * process group) never exited after SIGTERM (issue 18); a synchronous write meets EPIPE at once,
 * and pino then stops writing to that pipe.
 *
 * Written in batches of lines: a write per line was about 2.5 % of a tools/call's CPU
 * (scripts/bench, to /dev/null; more to a pipe). The lines wait here, in an array, and go to
 * SonicBoom as one string: SonicBoom's own batching (`minLength`) measures the UTF-8 length of all
 * that waits on every line, about 1 % of a tools/call's instructions (scripts/bench, callgrind). A
 * line waits at most LOG_FLUSH_MS, and what waits is written when the process exits, a crash
 * included (`exit` handlers run); a kill -9 loses at most the last LOG_FLUSH_MS of lines. One
 * stream per process, whatever the gateways in it.
 */
function stdoutLog(): DestinationStream {
  if (stdout) return stdout;
  const sonic = destination({ dest: 1, sync: true });
  let lines: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const batch = lines.join('');
    lines = [];
    chars = 0;
    sonic.write(batch);
  };
  stdout = {
    write(line: string): void {
      lines.push(line);
      chars += line.length;
      if (chars >= LOG_BATCH_CHARS) flush();
      else timer ??= setTimeout(flush, LOG_FLUSH_MS).unref();
    },
  };
  process.once('exit', () => {
    try {
      flush();
      // flush(), not flushSync(): in synchronous mode it meets a broken pipe once and gives up
      // (pino then drops the stream's writes), where flushSync() retries it forever.
      sonic.flush();
    } catch {
      // already destroyed
    }
  });
  return stdout;
}

let stdout: DestinationStream | undefined;

/**
 * Whether a JSON text may hold a key that reaches an object's prototype (`__proto__`, `constructor`)
 * by name: it holds either name, or a `\u` escape, which could spell one. A text that may is parsed
 * by Fastify's own JSON parser (secure-json-parse), which refuses such a key (400, as
 * TG_ERR_BAD_REQUEST); any other is parsed as it is, sparing the two regular expressions
 * secure-json-parse runs over every body: they took as long as JSON.parse itself (a 20 KB
 * tools/call: 15.5 -> 7.5 µs), where the three searches cost a fraction of that.
 */
function mayNameAPrototype(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
}

/**
 * The Fastify instance with the gateway's logging and error conventions: every refusal is
 * `{ error: { code, message } }` from the catalogue, with no stack trace; unexpected errors are
 * logged with the request id and answered as TG_ERR_INTERNAL.
 */
export function createApp(options: {
  logLevel: string;
  logStream?: DestinationStream | undefined;
}): FastifyInstance {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      serializers,
      stream: options.logStream ?? stdoutLog(),
    },
    logController: new AccessLog(),
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });

  const secureJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (mayNameAPrototype(text)) {
      void secureJson(request, text, done);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // An empty body, a byte order mark, bad JSON: Fastify's parser says which, as it would.
      void secureJson(request, text, done);
      return;
    }
    done(null, value);
  });

  // Form posts of the server-rendered pages (connect page, dashboard): a flat map of strings.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  app.setErrorHandler((error, request, reply) => {
    const code = (error as { code?: string }).code;
    const known =
      error instanceof GatewayError
        ? error
        : code !== undefined && FASTIFY_CODES[code]
          ? new GatewayError(FASTIFY_CODES[code])
          : undefined;
    if (isOutage(error)) {
      // The operator's signal that PostgreSQL or Redis is away: one warn line per refused request.
      request.log.warn({ err: error, code: 'TG_ERR_UNAVAILABLE' }, 'store or coordination unreachable');
      const unavailable = new GatewayError('TG_ERR_UNAVAILABLE');
      return reply.code(503).header('retry-after', '5').type('application/json').send(unavailable.toBody());
    }
    if (known) {
      request.log.info({ code: known.code, status: known.status }, 'request refused');
      if (known.headers) void reply.headers(known.headers);
      return reply.code(known.status).type('application/json').send(known.toBody());
    }
    request.log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'unhandled error');
    const internal = new GatewayError(
      'TG_ERR_INTERNAL',
      `Internal error. The operator can find it in the log under request id ${request.id}.`,
    );
    return reply.code(500).type('application/json').send(internal.toBody());
  });

  app.setNotFoundHandler((_request, reply) => {
    const error = new GatewayError('TG_ERR_NOT_FOUND');
    return reply.code(404).type('application/json').send(error.toBody());
  });

  return app;
}

/** This process's own origin for a loopback request, whatever address it listens on; undefined before it listens. */
export function localOrigin(app: FastifyInstance): string | undefined {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return undefined;
  if (address.address === '0.0.0.0') return `http://127.0.0.1:${address.port}`;
  if (address.address === '::') return `http://[::1]:${address.port}`;
  return address.family === 'IPv6'
    ? `http://[${address.address}]:${address.port}`
    : `http://${address.address}:${address.port}`;
}
