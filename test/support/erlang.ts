// Real BEAM nodes on loopback: the dev cluster's module, shared by the tests and the demo.
export * from '../../operator/devcluster/beam.js';
