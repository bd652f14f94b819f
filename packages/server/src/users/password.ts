import { hash, verify } from '@node-rs/argon2';

/**
 * argon2id with the library defaults (m = 19 MiB, t = 2, p = 1): exactly the OWASP Password Storage Cheat Sheet
 * minimum for argon2id. The PHC string carries its parameters, so raising them later keeps old hashes verifiable.
 */
export const hashPassword = (password: string): Promise<string> => hash(password);

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
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
  dummyHash ??= hash('parley-dummy-password-for-timing');
  return dummyHash;
};
