import winston from 'winston';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type Log = (level: LogLevel, message: string, meta?: Record<string, unknown>) => void;

/** Structured JSON logs on stderr (one object per line), at a configurable level. */
export function createLogger(level: LogLevel, component: string): Log {
  const logger = winston.createLogger({
    level,
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: process.stderr })],
  });
  return (l, message, meta) => logger.log(l, message, meta);
}

export const silentLog: Log = () => {};
