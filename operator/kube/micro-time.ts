/** RFC 3339 with microseconds: the MicroTime format of a Lease's times. */
export const microTime = (d: Date): string => d.toISOString().replace(/Z$/, '000Z');
