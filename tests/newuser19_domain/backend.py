"""An in-memory stand-in for Telemar's customer system: plan changes keyed by idempotency key."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass
class PlanChange:
    key: str
    customer: str
    plan: str


@dataclass
class PlanBackend:
    """Counts every call; applies one change per key (the tool's promise, Q6)."""

    delay: float = 0.0
    calls: list[str] = field(default_factory=list)
    changes: list[PlanChange] = field(default_factory=list)
    plans: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def change_plan(self, key: str, customer: str, plan: str) -> PlanChange:
        with self.lock:
            self.calls.append(key)
        if self.delay:
            time.sleep(self.delay)
        with self.lock:  # one transaction: look the key up, act only if it is new
            for change in self.changes:
                if change.key == key:
                    return change
            change = PlanChange(key=key, customer=customer, plan=plan)
            self.changes.append(change)
            self.plans[customer] = plan
            return change

    def reset(self) -> None:
        with self.lock:
            self.calls.clear()
            self.changes.clear()
            self.plans.clear()


BACKEND = PlanBackend()
