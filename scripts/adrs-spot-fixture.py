#!/usr/bin/env python3
"""Issue 41: runs the "Can't Be Late" authors' sky_spot simulator (the copy in UCB-ADRS/ADRS-Leaderboard,
problems/cant_be_late/resources/cant-be-late-simulator, with its real_traces.tar.gz unpacked into data/)
on their sampled windows, and writes CSV rows pair,window,start_tick,deadline_h,changeover_h,policy,cost_usd.
data/adrs_spot/authors_even.csv is the even-numbered windows 0-62 of this output (see its SOURCE.md).
Usage: SKY_SPOT_SIM=/path/to/cant-be-late-simulator python3 scripts/adrs-spot-fixture.py [--windows 0-63] > runs.csv
Needs numpy and pulp (the simulator's strategies package imports them); wandb is stubbed out."""
import argparse, os, sys, types, json, time
sys.modules['wandb'] = types.SimpleNamespace(run=None, log=lambda *a, **k: None)
SIM = os.environ.get('SKY_SPOT_SIM', 'cant-be-late-simulator')
sys.path.insert(0, SIM)
import logging; logging.disable(logging.CRITICAL)
import sky_spot.strategies  # registers all
from sky_spot.strategies import strategy as strategy_lib
from sky_spot.env import TraceEnv
from sky_spot.task import SingleTask
from sky_spot.utils import ClusterType

PAIRS = ['us-west-2a_k80_1','us-west-2a_k80_8','us-west-2a_v100_1','us-west-2a_v100_8',
         'us-west-2b_k80_1','us-west-2b_k80_8','us-west-2b_v100_1','us-west-2b_v100_8']

def run(trace_file, policy, deadline_h, d_h, job_h=48.0, strategy_file=None):
    args = argparse.Namespace(deadline_hours=deadline_h, restart_overhead_hours=[d_h],
                              task_duration_hours=[job_h], inter_task_overhead=[0.0])
    cls = strategy_lib.Strategy.get(policy)
    strat = cls(args)
    env = TraceEnv(trace_file, 0)
    task = SingleTask({'duration': job_h})
    env.reset(); strat.reset(env, task)
    # the single-region path of sky_spot.simulate._simulate_one, without the per-tick logging
    while not strat.task_done:
        env.step(strat.step())
    strat.step(); env.step(ClusterType.NONE)
    return env.accumulated_cost, env.tick

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--policies', default='on_demand,strawman,rc_cr_threshold')
    ap.add_argument('--deadlines', default='52,60,70,92')
    ap.add_argument('--changeovers', default='0.02,0.20,0.40')
    ap.add_argument('--windows', default='0-299')
    ap.add_argument('--pairs', default=','.join(PAIRS))
    a = ap.parse_args()
    lo, hi = map(int, a.windows.split('-'))
    print('pair,window,start_tick,deadline_h,changeover_h,policy,cost_usd')
    for d in a.changeovers.split(','):
        base = f'{SIM}/data/real/ddl=search+task=48+overhead={d}/real'
        for dl in a.deadlines.split(','):
            for pair in a.pairs.split(','):
                for w in range(lo, hi + 1):
                    f = f'{base}/{pair}/traces/random_start/{w}.json'
                    st = json.load(open(f))['metadata']['start_time']
                    for p in a.policies.split(','):
                        try:
                            c, _ = run(f, p, float(dl), float(d))
                            print(f'{pair},{w},{st},{dl},{d},{p},{c:.6f}')
                        except Exception as e:
                            print(f'{pair},{w},{st},{dl},{d},{p},ERROR {type(e).__name__}', flush=True)
                sys.stdout.flush()
