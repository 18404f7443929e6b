import { describe, expect, it } from "vitest";
import { sidecarManagerConfig } from "./config.js";

describe("sidecarManagerConfig", () => {
  it("gives a transformers model a pretrained model's learning rates unless told otherwise", () => {
    const tiny = sidecarManagerConfig({ quick: true });
    expect(tiny).toMatchObject({ transformersModel: null, device: "auto", sftLearningRate: 3e-3, learningRate: 3e-4 });
    expect(sidecarManagerConfig({ quick: true, transformersModel: "Qwen/Qwen2.5-0.5B" })).toMatchObject({
      sftLearningRate: 1e-5,
      learningRate: 1e-6,
    });
    expect(sidecarManagerConfig({ quick: true, transformersModel: "/models/m", sftLearningRate: 3e-3 })).toMatchObject({
      sftLearningRate: 3e-3,
      learningRate: 1e-6,
    });
  });
});
