/**
 * A build worker's malloc is asked for huge pages (issue 19) through GLIBC_TUNABLES, without
 * dropping or overriding what an operator set there.
 */
import { describe, expect, it } from 'vitest';
import { withHugePages } from '../../../core/catalog/build-pool.js';

describe("a build worker's GLIBC_TUNABLES", () => {
  it('asks for huge pages when nothing is set', () => {
    expect(withHugePages(undefined)).toBe('glibc.malloc.hugetlb=1');
    expect(withHugePages('')).toBe('glibc.malloc.hugetlb=1');
  });

  it("keeps the operator's tunables and adds huge pages to them", () => {
    expect(withHugePages('glibc.malloc.arena_max=2')).toBe('glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1');
  });

  it("leaves the operator's own choice of huge pages as it is", () => {
    expect(withHugePages('glibc.malloc.hugetlb=0')).toBe('glibc.malloc.hugetlb=0');
    expect(withHugePages('glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2')).toBe(
      'glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2',
    );
  });
});
