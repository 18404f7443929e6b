import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRng } from "@rubric/core";
import type {
  AgentView,
  Environment,
  EnvironmentEpisode,
  ParsedAction,
  Transition,
} from "../environment/environment.js";
import { EpisodeDoneError } from "../errors.js";
import type {
  ActOptions,
  PolicyDecision,
  PolicySample,
  PolicySftExample,
  PolicyUpdateMetrics,
  PolicyUpdateOptions,
  TrainablePolicy,
} from "../policy/policy.js";

/**
 * A small environment of the kind a user writes for their own tool: a key-value store the agent
 * reads with `Look[key]` (one unit of budget) before it answers with `Answer[value]`. The
 * trainer's tests run on it so that what they check (advantages, phases, μ's updates, resume) does
 * not depend on HotpotQA's retrieval.
 */
export interface LookupTask {
  readonly id: string;
  /** The key whose value is asked for. */
  readonly key: string;
}

export const STORE: Readonly<Record<string, string>> = {
  ash: "grey",
  birch: "white",
  cedar: "red",
  elm: "green",
};
export const KEYS = Object.keys(STORE);
const VALUES = [...new Set(Object.values(STORE))];
const BUDGET = 2;

const ACTION = /^(Look|Answer)\[([^\]\n]+)\]$/;

export function lookupEnvironment(): Environment<LookupTask> {
  return {
    name: "lookup",
    maxSteps: BUDGET + 1,
    description: "Answer with the value stored under a key. Look[key] reads the store; Answer[value] ends.",
    grammar: {
      forms: ["Look[key]", "Answer[value]"],
      parse(output) {
        const match = ACTION.exec(output.trim());
        return match === null ? undefined : { name: match[1]!, argument: match[2]! };
      },
      format: (action: ParsedAction) => `${action.name}[${action.argument}]`,
    },
    taskId: (task) => task.id,
    reset(task): EnvironmentEpisode {
      const history: { action: string; observation: string }[] = [];
      let budget = BUDGET;
      let done = false;
      const view = (): AgentView => {
        if (done) throw new EpisodeDoneError(task.id);
        return {
          taskId: task.id,
          task: `What is stored under ${task.key}?`,
          history: [...history],
          budgetLeft: budget,
          mustFinish: budget === 0,
        };
      };
      const end = (transition: Transition): Transition => {
        history.push({ action: transition.actionText, observation: transition.observation });
        done = transition.done;
        return transition;
      };
      return {
        get done() {
          return done;
        },
        view,
        step(output): Transition {
          if (done) throw new EpisodeDoneError(task.id);
          const action = ACTION.exec(output.trim());
          if (action === null) {
            budget = Math.max(0, budget - 1);
            return end({
              action: undefined,
              actionText: output,
              kind: "invalid",
              observation: "Invalid action.",
              done: false,
              reward: 0,
              info: {},
            });
          }
          const parsed = { name: action[1]!, argument: action[2]! };
          const actionText = `${parsed.name}[${parsed.argument}]`;
          if (parsed.name === "Answer") {
            const reward = parsed.argument === STORE[task.key] ? 1 : 0;
            return end({
              action: parsed,
              actionText,
              kind: "finish",
              observation: "Done.",
              done: true,
              reward,
              info: { correct: reward === 1 },
            });
          }
          if (budget === 0) {
            return end({
              action: parsed,
              actionText,
              kind: "violation",
              observation: "No budget left.",
              done: true,
              reward: 0,
              info: {},
            });
          }
          budget--;
          const value = STORE[parsed.argument];
          return end({
            action: parsed,
            actionText,
            kind: "tool",
            observation: value === undefined ? "No such key." : `${parsed.argument} = ${value}`,
            done: false,
            reward: 0,
            info: { found: value !== undefined },
          });
        },
      };
    },
  };
}

/** Every action the table policy can take. */
const CANDIDATES = [...KEYS.map((key) => `Look[${key}]`), ...VALUES.map((value) => `Answer[${value}]`)];

/**
 * A tabular softmax policy over the lookup environment's actions, conditioned on the task and the
 * last observation: exact log-probs and gradients, plain SGD. Small enough to check by hand, real
 * enough to learn the task in a few hundred rollouts.
 */
export class TablePolicy implements TrainablePolicy {
  readonly name = "table";
  logits = new Map<string, number>();
  reference = new Map<string, number>();
  updates: PolicySample[][] = [];

  #key(view: AgentView, candidate: string): string {
    return `${view.task}|${view.history.at(-1)?.observation ?? ""}|${candidate}`;
  }

  distribution(view: AgentView, table = this.logits): number[] {
    const logits = CANDIDATES.map((c) => table.get(this.#key(view, c)) ?? 0);
    const max = Math.max(...logits);
    const weights = logits.map((l) => Math.exp(l - max));
    const total = weights.reduce((a, b) => a + b, 0);
    return weights.map((w) => w / total);
  }

  async act(views: readonly AgentView[], options: ActOptions): Promise<PolicyDecision[]> {
    return views.map((view, i) => {
      const p = this.distribution(view);
      let index = p.indexOf(Math.max(...p));
      if (options.temperature > 0) {
        const u = createRng(options.seeds[i]!).next();
        let acc = 0;
        index = p.findIndex((q) => (acc += q) > u);
        if (index === -1) index = p.length - 1;
      }
      return { text: CANDIDATES[index]!, logProb: Math.log(p[index]!), trace: { index } };
    });
  }

  async update(samples: readonly PolicySample[], options: PolicyUpdateOptions): Promise<PolicyUpdateMetrics> {
    this.updates.push([...samples]);
    let loss = 0;
    const grads = new Map<string, number>();
    for (const { view, decision, advantage } of samples) {
      const p = this.distribution(view);
      const chosen = CANDIDATES.indexOf(decision.text);
      loss -= (advantage * Math.log(p[chosen]!)) / samples.length;
      CANDIDATES.forEach((c, j) => {
        const key = this.#key(view, c);
        const g = (-advantage * ((j === chosen ? 1 : 0) - p[j]!)) / samples.length;
        grads.set(key, (grads.get(key) ?? 0) + g);
      });
    }
    for (const [key, g] of grads) this.logits.set(key, (this.logits.get(key) ?? 0) - options.learningRate * g);
    return { policyLoss: loss, kl: 0, gradNorm: Math.hypot(...grads.values()), samples: samples.length };
  }

  async sft(examples: readonly PolicySftExample[], options: { readonly learningRate: number }) {
    const samples = examples.map((e) => ({ view: e.view, decision: { text: e.text }, advantage: 1 }));
    const { policyLoss } = await this.update(samples, { learningRate: options.learningRate, klCoef: 0 });
    return { loss: policyLoss };
  }

  async setReference(): Promise<void> {
    this.reference = new Map(this.logits);
  }

  /** Plain SGD holds no optimiser state; the count lets a test see when a trainer starts one afresh. */
  resets = 0;
  async resetOptimizer(): Promise<void> {
    this.resets++;
  }

  async save(directory: string): Promise<void> {
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      join(directory, "table.json"),
      JSON.stringify({ logits: [...this.logits], reference: [...this.reference] }),
    );
  }

  async load(directory: string): Promise<void> {
    const state = JSON.parse(readFileSync(join(directory, "table.json"), "utf8")) as {
      logits: [string, number][];
      reference: [string, number][];
    };
    this.logits = new Map(state.logits);
    this.reference = new Map(state.reference);
  }
}
