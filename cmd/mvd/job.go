package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/matview"
)

// newJobCmd is the `mvd job …` group: the refresh jobs of a running
// daemon (`mvd view refresh --async` submits them).
func newJobCmd(stdout, stderr io.Writer) *cobra.Command {
	return newGroupCmd("job", "wait for, list, show and cancel a daemon's refresh jobs",
		`The job commands follow the asynchronous refreshes that mvd view refresh
--async (or REFRESH … WITH (async = true) in mvd sql) submitted to the mvd
serve of one database (--db DIR; the daemon is found through
DIR/.mvd/serve.json). Jobs run in the daemon, one view's jobs in turn with its
automatic refreshes; the daemon keeps their history (the last 1000) across
restarts. Without a running daemon these commands exit 1.

A job is queued, then running, then ends succeeded (its result says the
mode: rebuild, incremental or no_op), conflict (another refresher committed
first; nothing written), failed, cancelled (nothing written) or interrupted
(the daemon stopped while it was queued or running; the view is at its
previous version or at the job's result, whole).`,
		newJobWaitCmd(stdout, stderr),
		newJobListCmd(stdout),
		newJobShowCmd(stdout),
		newJobCancelCmd(stdout),
	)
}

// jobFlags adds --db and --admin-token-file and returns the job client
// once the command runs.
func jobFlags(cmd *cobra.Command, dir *string) func() (jobClient, error) {
	dbFlag(cmd, dir)
	adminTokenFlag(cmd)
	return func() (jobClient, error) {
		if !cmd.Flags().Changed("db") {
			return jobClient{}, usagef("%s needs --db DIR", commandName(cmd))
		}
		return daemonJobs(cmd, *dir)
	}
}

func oneJobID(cmd *cobra.Command, args []string) error {
	return exactArgs(1, "exactly one job ID")(cmd, args)
}

// jobEndError is a job that did not succeed, with the exit status the
// CLI gives it: 3 for a lost conflict, 1 otherwise.
type jobEndError struct {
	msg  string
	code int
}

func (e jobEndError) Error() string { return e.msg }

// ExitCode implements exitCoder.
func (e jobEndError) ExitCode() int { return e.code }

// jobOutcome is the error of a job that ended without success (nil for
// a succeeded one).
func jobOutcome(j daemon.Job) error {
	switch j.State {
	case daemon.JobSucceeded:
		return nil
	case daemon.JobConflict:
		return jobEndError{fmt.Sprintf("job %s lost a conflict: %s", j.ID, j.Error), exitConflict}
	case daemon.JobQueued, daemon.JobRunning:
		return jobEndError{fmt.Sprintf("job %s is still %s", j.ID, j.State), exitFailure}
	}
	return jobEndError{fmt.Sprintf("job %s %s: %s", j.ID, j.State, j.Error), exitFailure}
}

func newJobWaitCmd(stdout, stderr io.Writer) *cobra.Command {
	var dir string
	var timeout time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "wait ID --db DIR",
		Short: "wait for a refresh job to end and print its result",
		Long: `Wait blocks until job ID ends and prints its refresh's result as mvd view
refresh does (--json: the same one line). Exit status 3: the refresh lost a
conflict (nothing was written); 1: it failed, was cancelled or interrupted,
or is still running after --timeout.`,
		Example: "  id=$(mvd view refresh --db data adults --async | jq -r .job_id)\n  mvd job wait --db data \"$id\" --timeout 10m --json",
		Args:    oneJobID,
	}
	jobs := jobFlags(cmd, &dir)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if timeout < 0 {
			return usagef("--timeout must not be negative")
		}
		jc, err := jobs()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		j, err := jc.wait(ctx, args[0])
		if err != nil {
			return err
		}
		if !j.State.Done() {
			return jobEndError{fmt.Sprintf("job %s is still %s after %s", j.ID, j.State, timeout), exitFailure}
		}
		if err := jobOutcome(j); err != nil {
			return err
		}
		r := jobResult(j.Result)
		printWarnings(stderr, r.Warnings)
		if asJSON {
			return writeResultJSON(stdout, r)
		}
		_, err = fmt.Fprintf(stdout, "refreshed %s: %s\n", j.View, describeResult(r))
		return err
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after `D` (e.g. 30s, 10m; default: wait as long as it takes)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the result as mvd view refresh --json does`)
	return cmd
}

func newJobListCmd(stdout io.Writer) *cobra.Command {
	var dir, view string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list --db DIR",
		Short:   "list the daemon's refresh jobs, newest first",
		Long:    `List prints the refresh jobs the daemon keeps (the last 1000), newest first; --view keeps one view's; --json prints them as one JSON array of job objects (as mvd job show --json).`,
		Example: "  mvd job list --db data --view adults",
		Args:    exactArgs(0, "no arguments"),
	}
	jobs := jobFlags(cmd, &dir)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		jc, err := jobs()
		if err != nil {
			return err
		}
		list, err := jc.jobs(cmd.Context(), view)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(stdout, list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tVIEW\tSTATE\tSUBMITTED\tOUTCOME")
		for _, j := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.ID, j.View, j.State, j.SubmittedAt.Format(time.RFC3339), jobSummary(j))
		}
		return tw.Flush()
	}
	cmd.Flags().StringVar(&view, "view", "", "only the jobs of view `NAME`")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array of job objects")
	return cmd
}

// jobSummary is a job's outcome in a few words.
func jobSummary(j daemon.Job) string {
	switch {
	case j.Result != nil:
		return describeResult(jobResult(j.Result))
	case j.Error != "":
		return oneLine(j.Error)
	}
	return "-"
}

func newJobShowCmd(stdout io.Writer) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID --db DIR",
		Short: "show one refresh job",
		Long: `Show prints job ID: its view, state, options, times, and its result or
error. --json prints the job object the daemon answers (GET /v1/jobs/{id}).`,
		Example: "  mvd job show --db data j_5f0c2a9d41e3b807 --json",
		Args:    oneJobID,
	}
	jobs := jobFlags(cmd, &dir)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		jc, err := jobs()
		if err != nil {
			return err
		}
		j, err := jc.job(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(stdout, j)
		}
		return writeJobText(stdout, j)
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job as one JSON object")
	return cmd
}

// writeJobText prints a job as `mvd job show` does.
func writeJobText(w io.Writer, j daemon.Job) error {
	var b strings.Builder
	fmt.Fprintf(&b, "job:        %s\nview:       %s\nstate:      %s\n", j.ID, j.View, j.State)
	if opts := jobOptionsText(j.Request); opts != "" {
		fmt.Fprintf(&b, "options:    %s\n", opts)
	}
	fmt.Fprintf(&b, "submitted:  %s\n", j.SubmittedAt.Format(time.RFC3339Nano))
	if !j.StartedAt.IsZero() {
		fmt.Fprintf(&b, "started:    %s\n", j.StartedAt.Format(time.RFC3339Nano))
	}
	if !j.EndedAt.IsZero() {
		fmt.Fprintf(&b, "ended:      %s\n", j.EndedAt.Format(time.RFC3339Nano))
	}
	if j.Result != nil {
		fmt.Fprintf(&b, "result:     %s\n", describeResult(jobResult(j.Result)))
	}
	if j.Error != "" {
		fmt.Fprintf(&b, "error:      %s\n", oneLine(j.Error))
	}
	if j.CancelRequested {
		b.WriteString("cancel:     requested\n")
	}
	if j.Note != "" {
		fmt.Fprintf(&b, "note:       %s\n", j.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func newJobCancelCmd(stdout io.Writer) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "cancel ID --db DIR",
		Short: "cancel a refresh job",
		Long: `Cancel cancels job ID and waits for it to end: a queued job never runs; a
running one has its refresh stopped before its commit, and commits nothing.
Exit status 1 if the job had ended already, or if its commit had landed
before the cancel arrived (it ends succeeded, and says so).`,
		Example: "  mvd job cancel --db data j_5f0c2a9d41e3b807",
		Args:    oneJobID,
	}
	jobs := jobFlags(cmd, &dir)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		jc, err := jobs()
		if err != nil {
			return err
		}
		if _, err := jc.cancel(cmd.Context(), args[0]); err != nil {
			return err
		}
		j, err := jc.wait(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if j.State != daemon.JobCancelled {
			return jobEndError{fmt.Sprintf("job %s was not cancelled: it ended %s (%s)", j.ID, j.State, jobSummary(j)), exitFailure}
		}
		_, err = fmt.Fprintf(stdout, "cancelled job %s of view %s; nothing was committed\n", j.ID, j.View)
		return err
	}
	return cmd
}

// jobOptionsText is a job's options as REFRESH … WITH (…) spells them.
func jobOptionsText(r daemon.JobRequest) string {
	var opts []string
	if r.Full {
		opts = append(opts, "full = true")
	}
	if r.SourceVersion != nil {
		opts = append(opts, fmt.Sprintf("source_version = %d", *r.SourceVersion))
	}
	if b := r.Budget.String(); b != "" {
		opts = append(opts, b)
	}
	return strings.Join(opts, ", ")
}

// asyncFlags adds `mvd view refresh`'s --async (and --admin-token-file,
// the token it sends the daemon).
func asyncFlags(cmd *cobra.Command, async *bool) {
	cmd.Flags().BoolVar(async, "async", false, `submit the refresh to the running mvd serve as a job and print {"job_id":"…"} at once (see mvd job)`)
	adminTokenFlag(cmd)
}

// viewRefreshAsync submits the refresh of view to the daemon serving dir
// and prints {"job_id":"…"}. Without a daemon it fails (exit 1) and
// nothing is submitted or committed.
func viewRefreshAsync(cmd *cobra.Command, dir, view string, o matview.RefreshOptions, cascade bool, stdout io.Writer) error {
	if cascade {
		return usagef("--async does not take --cascade (submit one job per view, upstream first)")
	}
	jc, err := daemonJobs(cmd, dir)
	if err != nil {
		return err
	}
	id, err := jc.submit(cmd.Context(), control.RefreshRequest{View: view, Full: o.Full, SourceVersion: o.SourceVersion, Budget: o.Budget})
	if err != nil {
		return err
	}
	return writeJSON(stdout, map[string]string{"job_id": id})
}
