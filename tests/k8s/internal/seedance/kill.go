package seedance

import (
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

var probeClient = &http.Client{Timeout: time.Second}

// Ready reports whether GET /readyz answers 200 within a second, as a readiness probe would
// (a follower answers 503; a process that listens but does not serve yet times out).
func (s *Server) Ready() bool {
	resp, err := probeClient.Get(s.URL + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}
