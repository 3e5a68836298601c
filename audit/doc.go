// Package audit measures graftrl's advantage estimators against the true step advantage
// A^π(s_t, a_t) = Q^π(s_t, a_t) − V^π(s_t) of the policy that collected the batch. graftrl's
// environments are small and replayable, so the truth can be measured rather than argued about:
// from any step of a batch, roll the same policy out many times from that exact context.
//
// An audit (Run) rolls out a fresh batch of a policy — a training iteration's shape: tasks of
// the training panel, each Group times — runs every estimator variant on it (DefaultVariants: grpo,
// drgrpo, gigpo, graphgpo, graft in modes path, td and paper, and graft td without its per-node
// normalisation), draws steps from it and estimates each drawn step's truth by Monte Carlo:
//
//   - Return-to-go. G_t = Σ_{k≥t} γ^{k−t}·r_k + γ^{T−t}·R: the step rewards r_k (the invalid-action
//     penalty …) and the outcome R (0 for a failure or a truncation), discounted the way GRAFT's
//     graph values are (V(⊥(R)) = R, one γ per edge). γ = 1 by default: the undiscounted return
//     is what training maximises and what success measures (Options.Gamma changes it).
//   - Context. Step t of a trajectory is replayed, not cloned: a continuation resets a fresh env
//     to the task (with the recorded episode seed for a stochastic env) and forces the recorded
//     actions a_0 … a_{t−1} through the env and through the decoder (rollout.Collector.Continue),
//     which rebuilds the token context and the env state exactly as the collector built them.
//     Every replayed step is checked against the recorded one.
//   - Q(s_t, a_t) is the mean G_t of MC continuations that also force a_t and then sample;
//     V(s_t) is the mean G_t of MC continuations that sample from a_t on. A = Q − V. The
//     standard errors are sd/√MC (sd with MC − 1), and SE(A) = √(SE(Q)² + SE(V)²), the two
//     samples being independent. A stochastic env (frozenlake) is reseeded at the branch point
//     (ReseedSlips) with a fresh seed per continuation, so that Q averages over a_t's random
//     outcome too; a stochastic env that cannot be reseeded is refused.
//   - Selection. Steps are drawn stratified by the trajectory's result (success, failure) × the
//     step's half of it (early: t < T/2, late) with equal allocation (Select); every statistic
//     weights a step by N_h/n_h, its stratum's batch steps per audited step, so that it estimates
//     the statistic over all the batch's steps.
//   - Statistics per estimator (compareAll): weighted Pearson and Spearman correlation with A
//     (Spearman on mid-ranks, ties averaged: Ranks); sign agreement on the steps whose sign is
//     resolved (|A| ≥ Z·SE(A), Z = 2); the single scale c minimising Σ w·(c·Â − A)² and the MSE
//     and normalised MSE at that c (ScaleMatch); Pearson r within each stratum; and on two
//     diagnostic slices — steps of failed trajectories that made progress, steps of successful
//     trajectories that made none — the mean truth, the mean scale-matched estimate and their
//     difference, the bias. Progress is the env's distance to success (envs.Info.Distance)
//     falling over the step (Progress); the slices' shares of all batch steps are reported too
//     (GraphGPO reports 22 % and 65 % on ALFWorld).
//   - Standard errors of the correlations (bootstrapCorrSE). Every Pearson r and Spearman ρ, and
//     each stratum's r, has a standard error over the sampling of the audited steps: a seeded
//     nonparametric bootstrap (Options.Bootstrap resamples, DefaultBootstrap) that redraws, within
//     every stratum, as many audited steps as it holds, with replacement, each drawn step keeping
//     its weight, and takes the standard deviation of the recomputed correlation. The Monte Carlo
//     noise of the truth attenuates the correlations (Ceiling below); it is not part of this SE.
//   - Noise. The truth is an estimate: its mean SE(A)² (the noise floor) is part of every MSE,
//     and √(1 − noise/variance) is the correlation even a perfect estimator would reach with it
//     (TruthSummary.Ceiling).
//
// AuditRun audits a training run's checkpoint (or all of them) and writes audit.json, audit.md,
// table.csv, summary.txt and the scatter plot (Result.Write), and with several checkpoints the
// metrics over training (WriteCheckpoints). compare.WriteReport includes an audit found in a
// compared run's directory.
package audit
