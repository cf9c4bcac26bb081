// Test client script that registers, then throws while loading (W7): its tool is disabled.
AiTools.register("throws_on_load", { execute: () => "never" });
throw new Error("boom at start-up");
