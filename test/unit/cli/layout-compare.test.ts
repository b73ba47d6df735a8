import { describe, expect, it } from '@jest/globals';

import { compareLayout } from '../../../operator/cli/layout-compare.js';
import { analyzeFailureDomains } from '../../../operator/failure-domains/index.js';
import { loadLayout, m } from '../failure-domains/helpers.js';

describe('compareLayout', () => {
  const layout = loadLayout('two-sites.yaml');
  const live = (members: Parameters<typeof analyzeFailureDomains>[0]) =>
    analyzeFailureDomains(members, { levels: [{ key: 'site' }, { key: 'hypervisor' }] });

  it('no difference when the live placement is the diagram', () => {
    const c = compareLayout(layout, analyzeFailureDomains(layout.members, layout.settings));
    expect(c).toEqual({ differences: [], notes: [] });
  });

  it('lists moved, missing and extra members and the totals', () => {
    const c = compareLayout(
      layout,
      live([
        m('etcd-1', { site: 'A', hypervisor: 'hv-1' }),
        m('etcd-2', { site: 'B', hypervisor: 'hv-2' }),
        m('etcd-9', { site: 'B', hypervisor: 'hv-2' }),
        m('etcd-8', undefined),
      ]),
    );
    expect(c.differences).toEqual([
      'in the layout, not live: etcd-3',
      'live, not in the layout: etcd-8, etcd-9',
      'etcd-2: site is A in the layout, B live',
      'etcd-2: hypervisor is hv-1 in the layout, hv-2 live',
      'the layout has 3 voters, 0 learners, 3 votes; live: 4 voters, 0 learners, 4 votes',
    ]);
    expect(c.notes).toEqual(['level host is only in the layout: not compared']);
  });

  it('a member of unknown placement live is a difference', () => {
    const c = compareLayout(
      layout,
      live([
        m('etcd-1', { site: 'A', hypervisor: 'hv-1' }),
        m('etcd-2', { site: 'A' }),
        m('etcd-3', { site: 'B', hypervisor: 'hv-2' }),
      ]),
    );
    expect(c.differences).toEqual(['etcd-2: hypervisor is hv-1 in the layout, unknown live']);
  });
});
