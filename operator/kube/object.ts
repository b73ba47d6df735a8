/** An object as the API server sends it: JSON, typed only where every kind agrees. */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};
