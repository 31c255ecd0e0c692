package seedance

import (
	"context"
	"net/http"
	"time"
)

// Kill sends SIGKILL (kill -9: no shutdown, no lease release, no final ledger write) and waits
// until the process is gone. Stop after Kill does nothing.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Ready reports whether GET /readyz answers 200 within a second, as a readiness probe would
// (a follower answers 503; a process that listens but does not serve yet times out).
func (s *Server) Ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := s.httpClient().Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}
