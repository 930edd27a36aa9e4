/** what each errno means for the model, and what it can do about it */
const CAUSES: Record<string, { cause: string; fix: string }> = {
  ENOENT: { cause: 'no such file or directory', fix: 'Check the path, or find the file with glob.' },
  EACCES: { cause: 'permission denied', fix: 'Check the permissions, or use a path you may access.' },
  EPERM: { cause: 'operation not permitted', fix: 'Check the permissions, or use a path you may access.' },
  EROFS: { cause: 'the file system is read-only', fix: 'Use a path on a writable file system.' },
  EISDIR: { cause: 'it is a directory, not a file', fix: 'Give the path of a file inside it.' },
  ENOTDIR: {
    cause: 'a component of the path is a file, not a directory',
    fix: 'Check each directory in the path.',
  },
  ENOSPC: { cause: 'no space left on the device', fix: 'Free space, or write somewhere else.' },
  EDQUOT: { cause: 'the disk quota is exceeded', fix: 'Free space, or write somewhere else.' },
  ELOOP: { cause: 'too many levels of symbolic links', fix: 'Resolve the symlink loop, or use the real path.' },
  ENAMETOOLONG: { cause: 'the path is too long', fix: 'Use a shorter path.' },
  EMFILE: { cause: 'too many open files', fix: 'Retry in a moment.' },
  ENFILE: { cause: 'too many open files in the system', fix: 'Retry in a moment.' },
  EBUSY: { cause: 'the file is busy', fix: 'Retry in a moment.' },
  ETXTBSY: { cause: 'the file is a running executable', fix: 'Stop the process, or write elsewhere.' },
  EEXIST: { cause: 'the path already exists', fix: 'Choose another path.' },
  EINVAL: { cause: 'the path or operation is invalid here', fix: 'Check the path.' },
  EIO: {
    cause: 'an input/output error (a failing device, or a special file that does not accept this)',
    fix: 'Use a regular file on a working disk.',
  },
};

/**
 * .what = a file-system failure as a sentence the model can act on: the action, the path, the cause and a fix
 * .why = a raw "EACCES: permission denied, open '/x'" names the code; the model also needs what to do next
 */
export const describeFsError = (input: { error: unknown; action: string; path: string }): string => {
  const code = (input.error as { code?: unknown })?.code;
  const known = typeof code === 'string' ? CAUSES[code] : undefined;
  if (known) return `Cannot ${input.action} ${input.path}: ${known.cause} (${code}). ${known.fix}`;
  const message = input.error instanceof Error ? input.error.message : String(input.error);
  return `Cannot ${input.action} ${input.path}: ${message}`;
};
