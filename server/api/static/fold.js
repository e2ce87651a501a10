// A model card's task list with runs folded: FOLD_MIN or more consecutive tasks of aclmdlRIDebugPrint's text that
// are equal but for their number become one line, `  4–203  ACL_MODEL_RI_TASK_KERNEL  aclnnAdds kernel Adds ×200`
// (the model graph folds the same way). A task group's kernels are lines of their own and never fold.

export const FOLD_MIN = 3;
const TASK = /^(\s*)(\d+)(\s\s.*)$/; // "       4  ACL_MODEL_RI_TASK_KERNEL   aclnnAdds kernel Adds"

export function foldDebug(text) {
  const out = [];
  let run = [];
  const flush = () => {
    if (run.length >= FOLD_MIN) {
      const [first, last] = [run[0], run[run.length - 1]];
      const numbers = `${first.n}–${last.n}`;
      out.push(`${' '.repeat(Math.max(0, first.end - numbers.length))}${numbers}${first.rest} ×${run.length}`);
    } else {
      out.push(...run.map((task) => task.line));
    }
    run = [];
  };
  for (const line of text.split('\n')) {
    const match = TASK.exec(line);
    const task = match && { line, n: Number(match[2]), end: match[1].length + match[2].length, rest: match[3] };
    const last = run[run.length - 1];
    if (!(task && last && task.rest === last.rest && task.n === last.n + 1 && task.end === last.end)) flush();
    if (task) run.push(task);
    else out.push(line);
  }
  flush();
  return out.join('\n');
}
