package stream

import (
	"context"
	"fmt"
	"log/slog"
)

// serverLogger routes nats-server's log lines to slog. The server's notices
// (startup banner, JetStream layout) go to Debug so that an embedded server
// is quiet by default; warnings and errors keep their level.
// Fatal lines (the server cannot listen, its store is unusable) are also
// handed to fatal, so that StartServer fails instead of waiting: the
// embedded server never exits the process.
type serverLogger struct {
	l     *slog.Logger
	fatal chan string
}

func (s serverLogger) log(level slog.Level, format string, v []any) {
	if !s.l.Enabled(context.Background(), level) {
		return
	}
	s.l.Log(context.Background(), level, fmt.Sprintf(format, v...), "component", "nats-server")
}

func (s serverLogger) Noticef(format string, v ...any) { s.log(slog.LevelDebug, format, v) }
func (s serverLogger) Warnf(format string, v ...any)   { s.log(slog.LevelWarn, format, v) }
func (s serverLogger) Fatalf(format string, v ...any) {
	s.log(slog.LevelError, format, v)
	select {
	case s.fatal <- fmt.Sprintf(format, v...):
	default:
	}
}
func (s serverLogger) Errorf(format string, v ...any) { s.log(slog.LevelError, format, v) }
func (s serverLogger) Debugf(format string, v ...any) { s.log(slog.LevelDebug-4, format, v) }
func (s serverLogger) Tracef(format string, v ...any) { s.log(slog.LevelDebug-8, format, v) }

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
