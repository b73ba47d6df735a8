/** A whole pod as the API server returns it: more than the operator keeps of it. */
export const fullPod = {
  metadata: {
    name: 'web-0',
    namespace: 'app',
    uid: 'u0',
    resourceVersion: '12',
    labels: { app: 'web' },
    annotations: { 'netzlive/hostname-naming-jsonpath': "$.metadata.labels['app']" },
    managedFields: [{ manager: 'kubelet' }],
  },
  spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'x', env: [{ name: 'A', value: 'b' }] }] },
  status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'False' }] },
};
