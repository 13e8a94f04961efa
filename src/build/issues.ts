/**
 * Validation problems, collected for a whole build and reported together.
 * Each names the file (relative to the runs directory), the field when there is one, and the fix.
 */
export type Severity = "error" | "warning";

export interface Issue {
  severity: Severity;
  /** Path relative to the runs directory, e.g. `2024-05-hekla/run.json`. */
  file: string;
  /** The field, element or variable inside the file, e.g. `layergroups[0].layers[1].base_url`. */
  field?: string;
  message: string;
  fix: string;
}

/** Collects the issues of one run. */
export class Issues {
  readonly list: Issue[] = [];

  error(file: string, message: string, fix: string, field?: string): void {
    this.list.push(field === undefined ? { severity: "error", file, message, fix } : { severity: "error", file, field, message, fix });
  }

  warning(file: string, message: string, fix: string, field?: string): void {
    this.list.push(field === undefined ? { severity: "warning", file, message, fix } : { severity: "warning", file, field, message, fix });
  }

  get hasErrors(): boolean {
    return this.list.some((issue) => issue.severity === "error");
  }
}

/** One line per issue: `ERROR file (field): message. Fix: ...` */
export function formatIssue(issue: Issue): string {
  const where = issue.field ? `${issue.file} (${issue.field})` : issue.file;
  return `${issue.severity === "error" ? "ERROR" : "WARNING"} ${where}: ${issue.message}. Fix: ${issue.fix}`;
}
