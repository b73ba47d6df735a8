// Real BEAM nodes on loopback: the dev cluster's module, shared by the tests and the demo.
export * from '../../dev/cluster/beam.js';
