import { readFile } from 'node:fs/promises';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  PlansFileError,
  type PlanTable,
} from '../domain/plans.ts';

/** The plan table: the defaults, with `PLANS_FILE`'s overrides applied when it is set. */
export async function loadPlans(file: string | undefined): Promise<PlanTable> {
  if (file === undefined) return DEFAULT_PLANS;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new PlansFileError([`cannot read ${file}: ${(err as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PlansFileError([`${file} is not valid JSON: ${(err as Error).message}`]);
  }
  return applyPlanOverrides(DEFAULT_PLANS, parsed);
}
