/** A mistake in what the user asked for (a flag, a configuration key, an input); the CLI prints it and exits 64. */
export class UsageError extends Error {}
