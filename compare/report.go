package compare

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/internal/plotstyle"
)

// Report files and the plot folder WriteReport writes into its directory.
const (
	ReportMarkdown = "report.md"
	ReportHTML     = "report.html"
	PlotDir        = "plots"
)

// WriteReport writes the comparison into dir: report.md (tables, protocol, configs, plots
// linked from plots/), report.html (the same, self-contained: plots inlined as base64 PNG), the
// CSV files of WriteCSV and the PNG and SVG plots of WritePlots. Runs that hold an advantage
// audit (rundir.AuditDir) add a closing "Advantage audit" section with its table and scatter plot.
// Existing files are replaced; other files in dir are left alone.
//
// The report is written whole or not at all: every file goes first into a folder beside dir,
// and only once all of them are written are they moved into dir (dir itself is that folder
// renamed when it did not exist). A report that fails (a figure that cannot be drawn, a full
// disk) leaves dir as it was.
func WriteReport(dir string, c *Comparison) error {
	return WriteReportContext(context.Background(), dir, c)
}

// WriteReportContext is WriteReport that stops when ctx is cancelled, with an error wrapping
// ErrInterrupted, leaving dir as it was.
func WriteReportContext(ctx context.Context, dir string, c *Comparison) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// The staging folder is in dir's parent, on dir's file system, so that its files are
	// renamed into place rather than copied.
	hold, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".partial-")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.RemoveAll(hold)
	stage := filepath.Join(hold, "report") // made by MkdirAll: the usual permissions, not MkdirTemp's 0700
	if err := c.writeReport(ctx, stage); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted("writing the report")
	}
	return moveInto(stage, dir)
}

// writeReport writes every file of the report into dir (see WriteReport).
func (c *Comparison) writeReport(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	plots, err := c.writePlots(ctx, filepath.Join(dir, PlotDir))
	if err != nil {
		return err
	}
	if err := c.WriteCSV(dir); err != nil {
		return err
	}
	doc := c.document(plots)
	audits, err := auditSection(c.Runs, dir)
	if err != nil {
		return err
	}
	doc = append(doc, audits...)
	if err := os.WriteFile(filepath.Join(dir, ReportMarkdown), []byte(doc.markdown()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	page, err := doc.html(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReportHTML), []byte(page), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// moveInto moves the complete report in stage to dir: a rename of the folder when dir does not
// exist, else a rename of each file over its namesake, which leaves dir's other files alone.
func moveInto(stage, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(stage, dir); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		return nil
	}
	return filepath.WalkDir(stage, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(stage, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dir, rel)
		if d.IsDir() {
			if err := os.MkdirAll(to, 0o755); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			return nil
		}
		if err := os.Rename(path, to); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		return nil
	})
}

// PlotFiles names the figures WritePlots wrote, relative to its directory, without extension
// (each exists as .png and .svg). Curves maps an environment to its learning-curve figure;
// Improvement is empty with a single method.
type PlotFiles struct {
	Curves      map[string]string
	Final       string
	Improvement string
	Profile     string
	// Paired is the paired-difference figure, empty without a paired table.
	Paired string
	// Levels is the figure along the difficulty axes, empty without Options.Levels.
	Levels string
}

// fileName keeps an environment name safe as a file name.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// WritePlots writes every figure of the comparison into dir as PNG and SVG.
func (c *Comparison) WritePlots(dir string) (PlotFiles, error) {
	return c.writePlots(context.Background(), dir)
}

// writePlots is WritePlots that stops before the next figure when ctx is cancelled.
func (c *Comparison) writePlots(ctx context.Context, dir string) (PlotFiles, error) {
	files := PlotFiles{Curves: map[string]string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return files, fmt.Errorf("plots: %w", err)
	}
	save := func(f *plotstyle.Figure, name string) error {
		if ctx.Err() != nil {
			return interrupted("drawing the plots")
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := f.Save(filepath.Join(dir, name+ext)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, env := range c.Envs {
		f, err := c.CurvesFigure(env)
		if err != nil {
			return files, err
		}
		name := "curves-" + fileName(env)
		if err := save(f, name); err != nil {
			return files, err
		}
		files.Curves[env] = name
	}
	f, err := c.FinalFigure()
	if err != nil {
		return files, err
	}
	if err := save(f, "final"); err != nil {
		return files, err
	}
	files.Final = "final"
	if len(c.Methods) > 1 {
		f, err := c.ImprovementFigure()
		if err != nil {
			return files, err
		}
		if err := save(f, "improvement"); err != nil {
			return files, err
		}
		files.Improvement = "improvement"
	}
	if c.NoPairs == "" {
		f, err := c.PairedFigure()
		if err != nil {
			return files, err
		}
		if err := save(f, "paired"); err != nil {
			return files, err
		}
		files.Paired = "paired"
	}
	if c.NoPairs == "" && len(c.Levels) > 0 {
		f, err := c.LevelsFigure()
		if err != nil {
			return files, err
		}
		if err := save(f, "levels"); err != nil {
			return files, err
		}
		files.Levels = "levels"
	}
	if f, err = c.ProfileFigure(); err != nil {
		return files, err
	}
	if err := save(f, "profile"); err != nil {
		return files, err
	}
	files.Profile = "profile"
	return files, nil
}

// fmtNum formats a table number: three decimals, "n/a" when undefined.
func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func fmtEst(e Estimate) string {
	if math.IsNaN(e.Value) {
		return "—"
	}
	return fmt.Sprintf("%s [%s, %s]", fmtNum(e.Value), fmtNum(e.Lo), fmtNum(e.Hi))
}

func fmtP(w WelchResult) string {
	if math.IsNaN(w.P) {
		return "n/a"
	}
	p := strconv.FormatFloat(w.P, 'g', 3, 64)
	if w.P < 0.001 {
		p = "<0.001"
	}
	return fmt.Sprintf("%s (t=%.2f, df=%.1f)", p, w.T, w.DF)
}

func joinInts[T int | int64 | uint64](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(s) == 0 {
		return "?"
	}
	return strings.Join(s, ", ")
}

// The report is built once as a list of blocks and rendered twice, as Markdown and as HTML.
type (
	heading struct {
		level int
		text  string
	}
	para   string
	bullet []string
	table  struct {
		head []string
		rows [][]string
	}
	figure struct{ alt, file string } // file relative to the report directory, without extension
	code   struct{ lang, text string }
	doc    []any
)

// document builds the report's blocks, section by section in reading order; writeReport appends
// the audit section.
func (c *Comparison) document(plots PlotFiles) doc {
	d := c.openingSection()
	d = append(d, c.protocolSection()...)
	d = append(d, c.levelsSection(plots)...)
	d = append(d, c.pairedSection(plots)...)
	d = append(d, c.stepSizeSection()...)
	d = append(d, c.perEnvSection(plots)...)
	d = append(d, c.aggregateSection(plots)...)
	d = append(d, c.rankingSection()...)
	d = append(d, c.gainSection()...)
	d = append(d, c.whySection()...)
	d = append(d, definitionsSection(c.Options.Holm)...)
	d = append(d, c.configsSection()...)
	d = append(d, c.runsSection()...)
	return d
}

// plotFigure is a figure block of a plot in PlotDir.
func plotFigure(alt, file string) figure {
	return figure{alt, filepath.ToSlash(filepath.Join(PlotDir, file))}
}

// openingSection is the title, the line that says what was compared, the warnings and the notes.
func (c *Comparison) openingSection() doc {
	o := c.Options
	d := doc{heading{1, o.Title}}
	d = append(d, para(fmt.Sprintf("%d runs: %d environment(s) × %d method(s). Metric: %s. Baseline: %s.",
		len(c.Runs), len(c.Envs), len(c.Methods), o.Metric, o.Baseline)))
	if len(c.Warnings) > 0 {
		d = append(d, heading{2, "Warnings"}, bullet(c.Warnings))
	}
	if len(o.Notes) > 0 {
		d = append(d, heading{2, "Notes"})
		for _, n := range o.Notes {
			d = append(d, para(n))
		}
	}
	return d
}

// protocolSection is the table of how the runs were trained, evaluated and compared.
func (c *Comparison) protocolSection() doc {
	o, p := c.Options, c.Protocol
	return doc{heading{2, "Protocol"}, table{head: []string{"item", "value"}, rows: [][]string{
		{"metric", p.Metric},
		{"evaluation", fmt.Sprintf("%s, %s; %s episode(s) per evaluation", p.Panel, p.Decoding, joinInts(p.EvalEpisodes))},
		{"final score", p.Final},
		{"seeds", fmt.Sprintf("%s (%s runs per environment and method)", joinInts(p.Seeds), rangeText(p.SeedsMin, p.SeedsMax))},
		{"iterations", joinInts(p.Iterations)},
		{"evaluation every", joinInts(p.EvalEvery) + " iteration(s)"},
		{"tasks per iteration × group size", joinInts(p.PerIter) + " × " + joinInts(p.GroupSize)},
		{"panel seed", joinInts(p.PanelSeed)},
		{"budget (final env steps)", strings.Join(budgetTexts(p.Budgets), "; ")},
		{"budget check", budgetCheckText(o)},
		{"statistics", fmt.Sprintf("IQM = scipy trim_mean(x, 0.25); %g %% stratified percentile bootstrap CIs, %d resamples, seed %d; P(X > Y) Mann–Whitney with ties ½; Welch t-test two-sided",
			100*o.Bootstrap.Confidence, o.Bootstrap.Resamples, o.Bootstrap.Seed)},
	}}}
}

// budgetTexts says each environment's range of final env steps, and the common budget the
// scores were read at when there is one.
func budgetTexts(budgets []EnvBudget) []string {
	var out []string
	for _, b := range budgets {
		s := fmt.Sprintf("%s: %d–%d env steps", b.Env, b.Min, b.Max)
		if b.Min == b.Max {
			s = fmt.Sprintf("%s: %d env steps", b.Env, b.Min)
		}
		if b.Common > 0 {
			s += fmt.Sprintf(" (scores read at %d)", b.Common)
		}
		out = append(out, s)
	}
	return out
}

// budgetCheckText says which budgets the comparison accepted.
func budgetCheckText(o Options) string {
	tol := "equal budgets required"
	if o.BudgetTolerance > 0 {
		tol = fmt.Sprintf("budgets within %.1f %% of each other required", 100*o.BudgetTolerance)
	}
	if o.Force {
		tol += " (forced)"
	}
	if o.Final == FinalCommonBudget {
		tol = "equal by construction (scores read at a common budget)"
	}
	return tol
}

// levelsSection is the paired differences along the difficulty axes, when environments are
// placed on them and runs are paired.
func (c *Comparison) levelsSection(plots PlotFiles) doc {
	rows := c.Levels
	if len(rows) == 0 || c.NoPairs != "" {
		return nil
	}
	o := c.Options
	d := doc{heading{2, "Along the difficulty axes (paired)"},
		para(fmt.Sprintf("Each method's final %s minus %s's on the same seed and warm start, by %s: mean over the seed pairs with its 95 %% t interval, and the pairs it was ahead of, tied with and behind the baseline. The warm start is the metric before training (iteration 0). The credit diagnostics are each run's mean over its iterations, averaged over the environment's runs (every method): the decision share is the share of steps leaving a state whose actions lead to different values (where step-level credit can differ from trajectory credit at all); wasted steps bring success no closer (ALFWorld, as GraphGPO measured it: 65 %% of the steps of successes wasted; in failures 22 %% of the steps make progress, so 78 %% are wasted).",
			MetricWords(o.Metric), o.Baseline, strings.Join(o.Levels.Axes, " and "))),
		c.levelsTable(rows)}
	if c.hasWasteTargets() {
		d = append(d, para(c.wasteTargetNote(rows)))
	}
	d = append(d, c.slopesSection()...)
	if plots.Levels != "" {
		d = append(d, plotFigure("paired difference along the difficulty axes", plots.Levels))
	}
	return d
}

// perEnvSection is each environment's table of unpaired statistics and its learning curves.
func (c *Comparison) perEnvSection(plots PlotFiles) doc {
	o := c.Options
	base := o.Baseline
	d := doc{heading{2, "Results per environment (unpaired)"},
		para(fmt.Sprintf("Unpaired statistics, treating every run as an independent sample. Final %s per run; IQM with its %g %% bootstrap interval; P(> %s) is the probability that a run of the method beats a run of the baseline; Welch's p tests equal means against %s.",
			o.Metric, 100*o.Bootstrap.Confidence, base, base))}
	head := []string{"method", "n", "seeds", "budget (env steps)", "mean", "std", "IQM [95 % CI]", "P(> " + base + ") [95 % CI]", "Welch p"}
	for _, env := range c.Envs {
		t := table{head: head}
		for _, cell := range c.Cells {
			if cell.Env != env {
				continue
			}
			budget := strconv.FormatInt(cell.BudgetMin, 10)
			if cell.BudgetMax != cell.BudgetMin {
				budget += "–" + strconv.FormatInt(cell.BudgetMax, 10)
			}
			t.rows = append(t.rows, []string{cell.Method, strconv.Itoa(cell.N()), joinInts(cell.Seeds()), budget,
				fmtNum(cell.Mean), fmtNum(cell.Std), fmtEst(cell.IQM), fmtEst(cell.Improvement), fmtP(cell.Welch)})
		}
		d = append(d, heading{3, env}, t)
		if f, ok := plots.Curves[env]; ok {
			d = append(d, plotFigure("learning curves in "+env, f))
		}
	}
	return d
}

// aggregateSection is the table over environments of normalised scores, and its figures.
func (c *Comparison) aggregateSection(plots PlotFiles) doc {
	var ranges []string
	for _, env := range c.Envs {
		r := c.rangeOf(env)
		ranges = append(ranges, fmt.Sprintf("%s [%g, %g]", env, r.Lo, r.Hi))
	}
	t := table{head: []string{"method", "envs", "runs", "IQM (normalised) [95 % CI]", "mean (normalised) [95 % CI]", "median [95 % CI]", "optimality gap [95 % CI]", "P(> " + c.Options.Baseline + ") [95 % CI]"}}
	for _, a := range c.Aggregate {
		t.rows = append(t.rows, []string{a.Method, strconv.Itoa(a.Envs), strconv.Itoa(a.N), fmtEst(a.IQM), fmtEst(a.Mean), fmtEst(a.Median), fmtEst(a.OptimalityGap), fmtEst(a.Improvement)})
	}
	d := doc{heading{2, "Aggregate over environments (unpaired)"},
		para("Scores are min–max normalised per environment (" + strings.Join(ranges, "; ") + "), then pooled over environments for IQM, mean, optimality gap and the profile; the median is rliable's, the median over environments of each environment's mean; P(> baseline) is averaged over the environments both methods ran on. The intervals resample runs within each environment."),
		t}
	if plots.Final != "" {
		d = append(d, plotFigure("final scores", plots.Final))
	}
	if plots.Improvement != "" {
		d = append(d, plotFigure("probability of improvement", plots.Improvement))
	}
	if plots.Profile != "" {
		d = append(d, plotFigure("performance profile", plots.Profile))
	}
	return d
}

// rankingSection orders the methods by IQM, over all environments and in each, when there is
// more than one method.
func (c *Comparison) rankingSection() doc {
	if len(c.Methods) <= 1 {
		return nil
	}
	var words bullet
	for i := range c.Rankings {
		// Over all environments first, then each environment.
		r := c.Rankings[(i+len(c.Rankings)-1)%len(c.Rankings)]
		words = append(words, r.Words())
	}
	return doc{heading{2, "Ranking (unpaired)"},
		para(fmt.Sprintf("Methods ordered by IQM; a pair is separated when the %g %% interval of the probability that the higher-ranked method's run beats the other's lies wholly above ½ (every pair's numbers: %s).",
			100*c.Options.Bootstrap.Confidence, PairsCSV)),
		words}
}

// definitionsSection defines every statistic of the report; holm is the family of Holm's
// correction (Options.Holm).
func definitionsSection(holm string) doc {
	holmDef := "Holm: Holm's step-down correction over the methods compared with the baseline in the same environment (or over all environments) and measure, separately for each test."
	if holm == HolmFamily {
		holmDef = "Holm: Holm's step-down correction, separately for each test, once per measure over every (environment, method) comparison with the baseline (holm: family); the rows over all environments stay outside that family, corrected over the methods alone."
	}
	return doc{heading{2, "Definitions"}, bullet{
		"IQM: interquartile mean, scipy.stats.trim_mean(x, 0.25): sort the n scores, drop ⌊n/4⌋ at each end, average the rest (n < 4: the mean).",
		"Confidence intervals: percentile bootstrap; each resample draws, independently per method and per environment, as many runs as there are, with replacement.",
		"P(X > Y): share of (run of X, run of Y) pairs where X scores higher, ties ½, per environment; averaged over environments.",
		"Pairs: a run of a method and the baseline's run in the same environment with the same seed and the same initial weights (summary.json's init_sha256; random weights drawn from the same seed when neither run has a warm start). Runs with an unknown or different warm start are never paired.",
		"Paired difference: method − baseline within a pair; mean with a percentile-bootstrap interval over pairs (stratified by environment over all environments), median, sample SD; ahead / tied / behind count pairs with a positive, zero and negative difference.",
		"Paired t: scipy.stats.ttest_rel, two-sided, n − 1 degrees of freedom; n/a for fewer than two pairs or differences that do not vary.",
		"Wilcoxon: scipy.stats.wilcoxon's defaults (zero differences dropped, average ranks for ties, no continuity correction); W = min(W+, W−); exact null distribution for up to 50 differences without ties or zeros and for up to 13 with them, the tie-corrected normal approximation otherwise.",
		holmDef,
		"Variance decomposition: two-way analysis of variance without interaction, method × seed, over the seeds every method ran from the same initial weights; shares of the total sum of squares; residual SD √(SS_resid/((m−1)(s−1))); seed SD √max(0, (MS_seed − MS_resid)/m). Sample sizes: smallest n with power ≥ 80 % for a two-sided t-test at level 0.05 (noncentral t).",
		"Gain: final score minus the evaluation before training (iteration 0).",
		"Welch p: two-sided Welch t-test on final scores, Welch–Satterthwaite degrees of freedom; n/a when a method has fewer than 2 runs or neither method's scores vary.",
		"Learning curves: each run's evaluations interpolated linearly in env steps onto a grid from the latest first evaluation to the earliest last evaluation of the environment's runs; IQM across runs per grid point; bands resample whole runs.",
		"Performance profile: fraction of runs whose normalised final score exceeds τ.",
		"Optimality gap (rliable): 1 − mean(min(x, 1)) over the normalised scores, how far the runs fall short of the top of the range on average; lower is better. Median (aggregate, rliable): the median over environments of the environment's mean normalised score; per environment (per_env.csv) the median of the runs' scores.",
	}}
}

// configsSection states every distinct run configuration: the first in full, the others by the
// keys whose values differ.
func (c *Comparison) configsSection() doc {
	d := doc{heading{2, "Configurations"},
		para(fmt.Sprintf("%d distinct configuration(s), with the per-run keys name, seed, out_dir and label left out. Config A is given in full; the table gives every config's values of the keys that differ between them, so together they state each config exactly.", len(c.Configs)))}
	ct := table{head: []string{"config", "envs", "methods", "runs"}}
	for _, r := range c.ConfigDiff {
		ct.head = append(ct.head, r.Key)
	}
	for i, g := range c.Configs {
		names := make([]string, len(g.Runs))
		for j, dir := range g.Runs {
			names[j] = filepath.Base(dir)
		}
		row := []string{g.ID, strings.Join(g.Envs, ", "), strings.Join(g.Methods, ", "), strings.Join(names, ", ")}
		for _, r := range c.ConfigDiff {
			v := r.Values[i]
			if v == "" {
				v = "(absent)"
			}
			row = append(row, v)
		}
		ct.rows = append(ct.rows, row)
	}
	d = append(d, ct)
	if len(c.Configs) > 0 {
		d = append(d, heading{3, "Config A"}, code{"yaml", c.Configs[0].YAML})
	}
	return d
}

// runsSection is the table of every run and the list of CSV files.
func (c *Comparison) runsSection() doc {
	rt := c.RunsTable()
	return doc{heading{2, "Runs"}, table{head: rt[0], rows: rt[1:]},
		para("CSV files: " + strings.Join([]string{PerEnvCSV, AggregateCSV, RunsCSV, CurvesCSV, ProfilesCSV, PairsCSV, PairedCSV, VarianceCSV, GainCSV}, ", ") + ".")}
}

func rangeText(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (d doc) markdown() string {
	var b strings.Builder
	for _, blk := range d {
		switch x := blk.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", x.level), x.text)
		case para:
			fmt.Fprintf(&b, "%s\n\n", x)
		case bullet:
			for _, s := range x {
				fmt.Fprintf(&b, "- %s\n", s)
			}
			b.WriteString("\n")
		case table:
			cells := make([]string, len(x.head))
			for i, h := range x.head {
				cells[i] = mdCell(h)
			}
			fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(cells, " | "), strings.Repeat("---|", len(x.head)))
			for _, r := range x.rows {
				cells := make([]string, len(r))
				for i, v := range r {
					cells[i] = mdCell(v)
				}
				fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
			}
			b.WriteString("\n")
		case figure:
			fmt.Fprintf(&b, "![%s](%s.png)\n\n", x.alt, x.file)
		case code:
			fmt.Fprintf(&b, "```%s\n%s\n```\n\n", x.lang, strings.TrimRight(x.text, "\n"))
		}
	}
	return b.String()
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:0.8em 0;font-size:0.92em}
th,td{border:1px solid #ccc;padding:0.3em 0.6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}
td:not(:first-child){font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto;border:1px solid #eee;margin:0.5em 0}
pre{background:#f6f8fa;padding:0.8em;overflow:auto;font-size:0.85em}
h1{border-bottom:2px solid #ddd}h2{border-bottom:1px solid #eee;margin-top:1.6em}
ul{padding-left:1.4em}`

// html renders the document as one self-contained page; figures are read from dir and inlined.
func (d doc) html(dir string) (string, error) {
	var b strings.Builder
	title := ""
	if len(d) > 0 {
		if h, ok := d[0].(heading); ok {
			title = h.text
		}
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		html.EscapeString(title), css)
	for _, blk := range d {
		switch x := blk.(type) {
		case heading:
			fmt.Fprintf(&b, "<h%d>%s</h%d>\n", x.level, html.EscapeString(x.text), x.level)
		case para:
			fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(string(x)))
		case bullet:
			b.WriteString("<ul>\n")
			for _, s := range x {
				fmt.Fprintf(&b, "<li>%s</li>\n", html.EscapeString(s))
			}
			b.WriteString("</ul>\n")
		case table:
			b.WriteString("<table>\n<tr>")
			for _, h := range x.head {
				fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
			}
			b.WriteString("</tr>\n")
			for _, r := range x.rows {
				b.WriteString("<tr>")
				for _, v := range r {
					fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(v))
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
		case figure:
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(x.file)+".png"))
			if err != nil {
				return "", fmt.Errorf("report: %w", err)
			}
			fmt.Fprintf(&b, "<figure><img alt=\"%s\" src=\"data:image/png;base64,%s\"></figure>\n",
				html.EscapeString(x.alt), base64.StdEncoding.EncodeToString(data))
		case code:
			fmt.Fprintf(&b, "<pre><code class=\"language-%s\">%s</code></pre>\n", x.lang, html.EscapeString(x.text))
		}
	}
	b.WriteString("</body>\n</html>\n")
	return b.String(), nil
}
