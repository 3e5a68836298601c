// Package compare turns finished training runs into an honest head-to-head comparison of
// advantage estimators: it loads run directories (config.yaml, metrics.jsonl, summary.json),
// checks that the runs of a comparison had equal env-step budgets, computes robust statistics
// with stratified-bootstrap confidence intervals, draws plots and writes a report. It never
// trains: every function here is a pure function of the files a run left behind.
//
// The statistics follow Agarwal et al., "Deep Reinforcement Learning at the Edge of the
// Statistical Precipice" (NeurIPS 2021) and its library rliable:
//
//   - IQM, the interquartile mean, is scipy.stats.trim_mean(x, 0.25): sort the n scores, drop
//     ⌊n/4⌋ from each end and average the rest (see [IQM]).
//   - Confidence intervals are 95 % percentile-bootstrap intervals; resampling draws runs with
//     replacement within each environment (the stratum) independently, from a seeded generator,
//     so the same inputs give the same intervals (see [StratifiedBootstrap]).
//   - The probability of improvement P(X > Y) is the Mann–Whitney U statistic divided by
//     n·m per environment (ties count ½), averaged over environments (see [ProbImprovement]).
//   - Welch's t-test gives a two-sided p-value with Welch–Satterthwaite degrees of freedom
//     (see [WelchTTest]).
//   - Aggregates across environments use min–max normalised scores (see [Range]), pooled.
//
// Those statistics treat every run as an independent sample. When the runs of two methods share
// an environment, a seed and their initial weights (the warm start every estimator of a seed
// starts from), the comparison is also made seed by seed ([SeedPair], [PairedRow]): the mean
// paired difference with a bootstrap interval over pairs and the paired t-test's interval,
// [PairedTTest] (scipy's ttest_rel), [WilcoxonSignedRank] (scipy's wilcoxon with its defaults),
// [Holm]'s correction over the methods compared with the baseline in each environment, or once
// over the whole family of environments × methods ([Options].Holm), a two-way variance
// decomposition method × seed ([TwoWay]) with the sample sizes a given difference needs
// ([SeedsNeeded], [RunsPerArmNeeded]), and each run's gain over its own start ([GainRow]).
// Runs that cannot be paired are named, never silently paired.
//
// The usual entry points are [FindRuns] and [LoadRuns] to read runs, [Compare] to compute every
// table, curve and profile of a comparison, and [WriteReport] to write report.md, report.html,
// CSV files and PNG/SVG plots. Their Context variants stop when the context is cancelled (a stop
// signal) with an error wrapping [ErrInterrupted]. Files are read within their size limits
// (internal/limits), values beyond ±[MaxMagnitude] are refused, and a report is written whole
// or not at all. [EvalMetrics] and [Metrics] are the names a comparison's metric may take, which
// [CheckMetric] checks before any work.
package compare
