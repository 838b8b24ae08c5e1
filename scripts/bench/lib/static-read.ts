/**
 * One keep-alive HTTP/1.1 connection whose reads all land in one buffer allocated once (net's
 * `onread`), for the tools/list load: an answer of a megabyte then allocates nothing but its ~200
 * bytes of head in the load generator, whose own garbage collector would otherwise be measured as
 * list latency (socket reads into fresh buffers are external memory, and past 64 MB of it V8
 * starts a mark-compact, 3-5 ms in a small heap). Only what the gateway answers JSON with is read:
 * a Content-Length body, one request at a time; anything else fails the request.
 */
import { connect, type Socket } from 'node:net';

/** What a request got: the status, and the body when it was asked to be kept. */
export interface StaticReadAnswer {
  status: number;
  body: Buffer | undefined;
}

interface Pending {
  keep: boolean;
  /** Head bytes of a head split over reads (copied: the read buffer is reused). */
  partial: Buffer | undefined;
  status: number;
  /** Body bytes still to come; -1 while the head is read. */
  left: number;
  kept: Buffer[];
  resolve: (answer: StaticReadAnswer) => void;
  reject: (error: Error) => void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const READ_BUFFER_BYTES = 256 * 1024;

export class StaticReadConnection {
  readonly #socket: Socket;
  readonly #host: string;
  #pending: Pending | undefined;
  #failure: Error | undefined;

  private constructor(url: URL) {
    this.#host = url.host;
    const buffer = Buffer.alloc(READ_BUFFER_BYTES);
    this.#socket = connect({
      host: url.hostname,
      port: Number(url.port),
      noDelay: true,
      onread: {
        buffer,
        callback: (n) => {
          this.#read(buffer.subarray(0, n));
          return true;
        },
      },
    });
    const fail = (error: Error): void => {
      this.#failure ??= error;
      this.#pending?.reject(error);
      this.#pending = undefined;
    };
    this.#socket.on('error', fail);
    this.#socket.on('close', () => fail(new Error('the connection closed')));
  }

  static async open(url: string): Promise<StaticReadConnection> {
    const connection = new StaticReadConnection(new URL(url));
    await new Promise<void>((resolve, reject) => {
      connection.#socket.once('connect', resolve);
      connection.#socket.once('error', reject);
    });
    return connection;
  }

  /** POSTs `body` to `path` with `headers`; the answer's body is kept when `keep`, or when its status is not 200. */
  post(
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    keep: boolean,
  ): Promise<StaticReadAnswer> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#pending) return Promise.reject(new Error('one request at a time'));
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.#host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      this.#pending = { keep, partial: undefined, status: 0, left: -1, kept: [], resolve, reject };
      this.#socket.write(`${head}\r\n${body}`);
    });
  }

  close(): Promise<void> {
    this.#socket.end();
    return new Promise((resolve) => this.#socket.once('close', () => resolve()));
  }

  /** Bytes read into the connection's one buffer (valid until the next read). */
  #read(read: Buffer): void {
    const pending = this.#pending;
    if (!pending) {
      this.#socket.destroy(new Error('bytes arrived with no request waiting'));
      return;
    }
    let bytes = read;
    if (pending.left < 0) {
      const head = pending.partial ? Buffer.concat([pending.partial, bytes]) : bytes;
      const end = head.indexOf(HEAD_END);
      if (end === -1) {
        pending.partial = Buffer.from(head);
        return;
      }
      const text = head.toString('latin1', 0, end);
      const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
      if (length === undefined) {
        this.#socket.destroy(new Error(`an answer without Content-Length: ${text.split('\r\n')[0]}`));
        return;
      }
      pending.status = Number(text.slice(9, 12));
      pending.left = Number(length);
      // A refusal's body is its message.
      pending.keep ||= pending.status !== 200;
      bytes = head.subarray(end + HEAD_END.length);
    }
    if (bytes.length > pending.left) {
      this.#socket.destroy(new Error('more bytes than the answer announced'));
      return;
    }
    if (pending.keep) pending.kept.push(Buffer.from(bytes));
    pending.left -= bytes.length;
    if (pending.left > 0) return;
    this.#pending = undefined;
    pending.resolve({ status: pending.status, body: pending.keep ? Buffer.concat(pending.kept) : undefined });
  }
}
