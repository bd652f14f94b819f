type Argon2 = typeof import('@node-rs/argon2');
let argon2: Promise<Argon2> | undefined;
/** The native argon2 addon, opened on the first hash or check: most CLI commands and many requests need none. */
const loadArgon2 = (): Promise<Argon2> => {
  argon2 ??= import('@node-rs/argon2');
  return argon2;
};

/**
 * argon2id with the library defaults (m = 19 MiB, t = 2, p = 1): exactly the OWASP Password Storage Cheat Sheet
 * minimum for argon2id. The PHC string carries its parameters, so raising them later keeps old hashes verifiable.
 */
export const hashPassword = async (password: string): Promise<string> => (await loadArgon2()).hash(password);

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  const { verify } = await loadArgon2();
  try {
    return await verify(phc, password);
  } catch {
    return false;
  }
}

/**
 * Verified against when the email is unknown, so an unknown account costs the same time as a wrong password
 * (no account enumeration through timing).
 */
let dummyHash: Promise<string> | undefined;
export const dummyPasswordHash = (): Promise<string> => {
  dummyHash ??= hashPassword('parley-dummy-password-for-timing');
  return dummyHash;
};
