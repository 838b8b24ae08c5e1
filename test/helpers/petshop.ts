/**
 * The Pet Shop test provider (test/fixtures/catalog/valid/petshop.yaml: API-key auth, an OpenAPI
 * document) served by a gateway whose base URL for it points at a loopback stand-in for its API.
 */
import { fileURLToPath } from 'node:url';
import { startGateway, type TestGateway } from './gateway.js';
import { jsonAnswer, startReceiver, type Answer, type Received, type Receiver } from './receiver.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/catalog/valid/', import.meta.url));

/** The Pet Shop manifest and the OpenAPI document it reads, for `manifestFiles`. */
export const PETSHOP_MANIFESTS: string[] = [`${FIXTURES}petshop.yaml`, `${FIXTURES}petshop.openapi.yaml`];

/** How the gateway reaches the loopback Pet Shop API. */
export interface PetshopSettings {
  /** The Pet Shop base URL the gateway is given, from the loopback API's URL (that URL by default). */
  baseUrl?: (apiUrl: string) => string;
  /** Sets TOOLGATE_ALLOW_PRIVATE_NETWORK=1, which reaching a loopback API needs (default true). */
  allowPrivateNetwork?: boolean;
  /** More gateway settings, from the loopback API's URL. */
  env?: (apiUrl: string) => Record<string, string>;
}

/** The gateway settings that point the Pet Shop provider at a loopback API on `apiUrl`. */
export function petshopEnv(apiUrl: string, settings: PetshopSettings = {}): Record<string, string> {
  const { baseUrl = (url: string) => url, allowPrivateNetwork = true, env = () => ({}) } = settings;
  return {
    ...(allowPrivateNetwork ? { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1' } : {}),
    TOOLGATE_PROVIDER_PETSHOP_BASE_URL: baseUrl(apiUrl),
    ...env(apiUrl),
  };
}

/**
 * A loopback Pet Shop API that checks only the key: a request with `Authorization: Bearer <key>`
 * for one of `keys` (or one `open` lets through) gets 200 with `body` as JSON, one body for every
 * path (an `email` names the account, `items` is the list of pets); any other gets 401
 * {"message": "invalid api key"}.
 */
export function petshopApi(options: {
  keys: string[];
  body: Record<string, unknown>;
  /** Requests answered as accepted whatever their key (another provider sharing the loopback API). */
  open?: (req: Received) => boolean;
}): (req: Received) => Answer {
  return (req) =>
    options.open?.(req) || options.keys.some((key) => req.headers.authorization === `Bearer ${key}`)
      ? jsonAnswer(200, options.body)
      : jsonAnswer(401, { message: 'invalid api key' });
}

export interface PetshopGateway {
  /** The loopback Pet Shop API, with every request it received. */
  api: Receiver;
  /** The gateway serving the Pet Shop manifest (only), pointed at `api`. */
  tg: TestGateway;
  /** Closes the gateway (removing its data dir), then the loopback API. */
  close(): Promise<void>;
}

/** Starts a loopback Pet Shop API answering as `answer`, and a gateway pointed at it (see petshopEnv). */
export async function startPetshop(
  answer: (req: Received) => Answer,
  settings: PetshopSettings = {},
): Promise<PetshopGateway> {
  const api = await startReceiver(answer);
  let tg: TestGateway;
  try {
    tg = await startGateway(petshopEnv(api.url, settings), { manifestFiles: PETSHOP_MANIFESTS });
  } catch (error) {
    await api.close();
    throw error;
  }
  return {
    api,
    tg,
    async close() {
      await tg.close();
      await api.close();
    },
  };
}
