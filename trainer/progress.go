package trainer

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
)

// progress shows a progress bar on terminals; elsewhere the trainer prints plain log lines.
type progress struct {
	bar *progressbar.ProgressBar
}

func newProgress(out io.Writer, opts Options, total int) progress {
	return newProgressNamed(out, opts, total, "training")
}

// newProgressNamed is newProgress with another description (e.g. "sft").
func newProgressNamed(out io.Writer, opts Options, total int, what string) progress {
	if !opts.Progress || opts.Quiet {
		return progress{}
	}
	return progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p progress) active() bool { return p.bar != nil }

func (p progress) update(iter int, m Metrics) {
	if p.bar == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("iter %d success %.2f entropy %.2f", iter, m["success"], m["entropy"]))
	_ = p.bar.Set(iter)
}

// clear erases the bar from its line so that a log line can be printed there; the bar redraws
// below the line at its next update.
func (p progress) clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

func (p progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
