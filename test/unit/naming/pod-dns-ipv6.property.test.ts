import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { dashedIP } from '../../../operator/naming/fallbacks.js';

/**
 * PodDNS of an IPv6 pod against the rule that answers it. Kubernetes' DNS (CoreDNS's
 * `kubernetes` plugin, `pods insecure|verified`) reads a pod label back into an address by
 * turning its dashes into dots when there are exactly three and no `--`, else into colons;
 * `pods verified` then answers only if that text equals the pod's `status.podIP` as written.
 * Kubernetes writes pod IPs in RFC 5952 form (the API server warns on any other), which the
 * WHATWG URL parser also produces: that is the reference form here, independent of the code
 * under test.
 */

/** The address a label stands for, read back as CoreDNS reads it. */
const coreDnsAddress = (label: string) =>
  (label.match(/-/g) ?? []).length === 3 && !label.includes('--')
    ? label.replaceAll('-', '.')
    : label.replaceAll('-', ':');
/** RFC 5952 form of an IPv6 address. */
const canonical = (ip: string) => new URL(`http://[${ip}]/`).hostname.slice(1, -1);
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

describe('PodDNS of IPv6 pod IPs, read back as Kubernetes DNS reads them', () => {
  it('is one DNS label that stands for the same address', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const label = dashedIP(ip);
        expect(label).toMatch(DNS_LABEL);
        expect(canonical(coreDnsAddress(label))).toBe(canonical(ip));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads back to status.podIP itself (what `pods verified` compares) unless it begins or ends with ::', () => {
    fc.assert(
      fc.property(
        fc
          .ipV6()
          .map(canonical)
          .filter((ip) => !ip.startsWith('::') && !ip.endsWith('::')),
        (podIP) => {
          expect(coreDnsAddress(dashedIP(podIP))).toBe(podIP);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('an address that begins or ends with :: gets a 0 there, which only `pods insecure` answers', () => {
    expect(dashedIP('::1')).toBe('0--1');
    expect(coreDnsAddress('0--1')).toBe('0::1');
    expect(dashedIP('fd00:1::')).toBe('fd00-1--0');
    expect(coreDnsAddress('fd00-1--0')).toBe('fd00:1::0');
  });
});
