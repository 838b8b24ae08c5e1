import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { specialPurposeRange } from '../../../core/upstream/outbound.js';
import { OutboundBlockedError, type OutboundClient } from '../../../core/upstream/outbound.js';
import { useOutboundClients } from '../../helpers/outbound.js';

describe('specialPurposeRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private (unique local)'],
    ['fd12:3456::1', 'private (unique local)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:c0a8:0101::1', 'private'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['2001:db8::1', 'documentation'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard-only'],
    ['1::1', 'reserved'],
    ['localhost', 'not an IP address'],
  ])('%s is %s', (address, range) => {
    expect(specialPurposeRange(address)).toBe(range);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '11.0.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '2002:808:808::1',
  ])('%s is globally routable', (address) => {
    expect(specialPurposeRange(address)).toBeUndefined();
  });
});

describe('OutboundClient guard (no connection is ever opened here)', () => {
  const client = useOutboundClients({
    allowPrivateNetwork: false,
    timeoutMs: 5_000,
    maxResponseBytes: 1_000,
    maxRedirects: 3,
  });

  /** A resolver that answers from a table and records what it was asked. */
  function resolver(table: Record<string, string[]>): LookupFunction & { asked: string[] } {
    const asked: string[] = [];
    const lookup: LookupFunction = (hostname, _options, callback) => {
      asked.push(hostname);
      const addresses: LookupAddress[] = (table[hostname] ?? []).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
      callback(null, addresses);
    };
    return Object.assign(lookup, { asked });
  }

  async function refusal(c: OutboundClient, url: string): Promise<OutboundBlockedError> {
    const error: unknown = await c.send({ method: 'GET', url, headers: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboundBlockedError);
    return error as OutboundBlockedError;
  }

  it.each([
    ['http://127.0.0.1/', '127.0.0.1'],
    ['http://10.0.0.1:8080/', '10.0.0.1'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://[::1]:9/', '::1'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['https://0.0.0.0/', '0.0.0.0'],
  ])('refuses the address literal %s without resolving it', async (url, host) => {
    const lookup = resolver({});
    const error = await refusal(client({ lookup }), url);
    expect(error.reason).toBe('private_address');
    expect(error.host).toBe(host);
    expect(lookup.asked).toEqual([]);
  });

  it('refuses a name that resolves to a private address, after resolving it', async () => {
    const lookup = resolver({ 'internal.test': ['10.1.2.3'] });
    const error = await refusal(client({ lookup }), 'https://internal.test/v1');
    expect(error).toMatchObject({ reason: 'private_address', host: 'internal.test' });
    expect(error.message).toBe('internal.test resolves to 10.1.2.3, not a public address (private)');
    expect(lookup.asked).toEqual(['internal.test']);
  });

  it('refuses a name when any of its addresses is private (DNS rebinding)', async () => {
    const lookup = resolver({ 'rebind.test': ['93.184.216.34', '127.0.0.1'] });
    const error = await refusal(client({ lookup }), 'http://rebind.test/');
    expect(error.message).toContain('127.0.0.1');
  });

  it('checks every connection, so a changed answer is caught on the next one', async () => {
    // Each connection attempt resolves again through the guard; no earlier verdict is reused.
    const table: Record<string, string[]> = { 'flip.test': ['10.0.0.7'] };
    const lookup = resolver(table);
    const c = client({ lookup });
    await refusal(c, 'http://flip.test/');
    table['flip.test'] = ['192.168.0.7'];
    const error = await refusal(c, 'http://flip.test/');
    expect(error.message).toContain('192.168.0.7');
    expect(lookup.asked).toEqual(['flip.test', 'flip.test']);
  });

  it('never puts the path or query in the error', async () => {
    const error = await refusal(client(), 'http://10.0.0.1/hooks/T0/B0?token=sekret');
    expect(`${error.message} ${error.host}`).not.toMatch(/sekret|hooks/);
  });

  it.each(['ftp://example.com/file', 'file:///etc/passwd', 'data:text/plain,hi', 'ws://example.com/'])(
    'refuses the scheme of %s',
    async (url) => {
      expect((await refusal(client(), url)).reason).toBe('unsupported_scheme');
    },
  );

  it('refuses an unparseable URL without echoing it', async () => {
    const error = await refusal(client(), 'http://exa mple.com/?key=sekret');
    expect(error.reason).toBe('invalid_url');
    expect(error.message).not.toContain('sekret');
  });

  it('does not resolve at all when the caller already aborted', async () => {
    // Were it resolved, the loopback answer would be refused: the assertion below tells the two apart.
    const lookup = resolver({ 'public.test': ['127.0.0.1'] });
    const reason = new Error('cancelled by the client');
    const sent = client({ lookup }).send({
      method: 'GET',
      url: 'http://public.test/',
      headers: {},
      signal: AbortSignal.abort(reason),
    });
    await expect(sent).rejects.toBe(reason);
    expect(lookup.asked).toEqual([]);
  });
});
