// The signals a long-running CLI command (`worker`, `tick`) takes as "stop":
// SIGTERM (a process manager, a container's stop), SIGINT (Ctrl-C) and
// SIGHUP (a closed terminal, a reload). The first stops gracefully, a
// second exits at once; each command says what graceful means for it.
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
